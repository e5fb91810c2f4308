package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints one line per capability, verdict first, then the
// recommendation.
func WriteTable(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPABILITY\tVERDICT\tEVIDENCE")
	for _, name := range AllCapabilities {
		r, ok := rep.Capabilities[name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, r.Verdict, r.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write the probe table: %w", err)
	}
	why := "every conditional write is native"
	if rep.Recommendation != RecommendNative {
		why = FirstWanting(rep.Capabilities) + " is not native"
	}
	_, err := fmt.Fprintf(w, "\nrecommendation: backend.conditional: %s (%s)\n", rep.Recommendation, why)
	return err
}

// WriteJSON prints the report as {"capabilities": {...}, "recommendation": ...}.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("write the probe report: %w", err)
	}
	return nil
}
