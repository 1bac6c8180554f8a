// Package shell parses a command line into the simple commands it runs,
// for the analyses that judge it (the impact preview, the risk analysis,
// the checks of commands that would decide approvals).
//
// The line is parsed with mvdan.cc/sh (bash, or POSIX sh); nothing runs and
// the filesystem is not read. Each simple command comes with:
//
//   - its words, each with its certain value or marked unknown with why
//     (a variable not set earlier in the line, a command or process
//     substitution, arithmetic, a glob, brace expansion, ~, whose home is
//     not known here); the raw text is always kept;
//   - its assignments and redirections (operator, target, whether the
//     target is certain, whether it writes, truncates or reads);
//   - its place: pipeline and stage, the commands whose output it reads,
//     background, subshell, function, loop, condition, substitution;
//   - the wrappers it was run through (sudo, doas, env, nice, ionice,
//     timeout, xargs, stdbuf, setsid, nohup, chroot, watch, flock, script
//     -c, time, command, builtin, exec, chrt, taskset, busybox, su -c,
//     runuser, ssh HOST CMD, docker/podman exec and run, kubectl exec --),
//     outermost first, with the user, remote place, directory and
//     environment changes each makes;
//   - the code it runs that cannot be read (Opaque): eval of words not
//     certain, source and ., an interpreter's -c/-e code, a script file,
//     code read from its input, a command name not certain.
//
// Scripts run by a shell (sh|bash|dash|zsh|ksh -c, su -c, script -c,
// flock -c, watch, ssh's command line, eval of certain words, trap's
// action) are parsed
// in turn, to a depth limit; find -exec/-execdir/-ok/-okdir commands are
// children of the find command (Parent) and get words not on the line.
//
// Variables are followed only within the line, only where the assignment
// surely happens before the use (not in a branch, loop, subshell, pipeline
// or background job); a nested shell starts knowing none, and a builtin
// that may change them (unset, read, eval, source, declare -n, a function
// of the line, a command whose name is not certain ...) forgets them all.
// alias, hash, shopt and enable with arguments are findings: command
// names after them may not run what they say. What the
// environment holds is never assumed: an analysis that knows more (the
// impact preview reads HOME and CDPATH) keeps that knowledge itself.
//
// Through unwraps one wrapper of a word list by the same rules, for an
// analysis that expands words itself (the impact preview). Script.Others
// are the words outside simple commands (for items, case words, [[ ]]).
//
// Bad input is an *Error, never a panic: a line longer than
// Options.MaxBytes, one holding NUL or invalid UTF-8, one that does not
// parse, one nested deeper than Options.MaxNesting. Parts that could not
// be read within a line that parsed are Findings of the Script.
package shell
