package cli

import "strings"

// jsonArray writes elements that are already JSON as an array, one per line;
// an empty array is [] (never null).
func jsonArray(elems []string) string {
	if len(elems) == 0 {
		return "[]"
	}
	return "[\n  " + strings.Join(elems, ",\n  ") + "\n]"
}
