// Package approvals is what a surface shows of a proposal, and the one set
// of words for it: the record, who waits on it and what is known of its
// run, where it stands against the approval policy and each vote cast on
// it, the signatures kept for its decisions as checked against the trust
// file. show, list, notify and the console read a proposal through it, so
// that one fact is said one way (or, where two surfaces say it in their
// own form, by one function given the form).
//
// It reads only through package storage, which keeps the rows and decides
// in its one transaction path; the rules themselves (who asked, which votes
// count, who may vote) are package policy's. Nothing here decides: it
// says what the store decided or will decide. Every string an agent or a
// row can set is sanitised before it is part of the words.
package approvals
