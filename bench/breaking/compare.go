package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/msgcontract/msgcontract/registry/compat"
)

// compare runs both tools on every pair and prints agreement:
//   - per buf category (WIRE_JSON, WIRE): buf's verdict against
//     msgcontract's at FULL, with the CONTRACT rules (which buf cannot see)
//     and the CODE rules (which no level includes) set aside;
//   - per msgcontract category: msgcontract's rules of that category (CODE
//     ones with --code) against the buf rules the rule table names as
//     their equivalents, run as one buf configuration.
func compare(cfg config, pairs []pair) error {
	equiv := equivalents()
	var all []string
	for _, ids := range equiv {
		all = append(all, ids...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	type result struct {
		name string
		ours map[compat.Category][]string
		buf  map[string][]string // buf configuration -> rule IDs found
	}
	var results []result
	for _, p := range pairs {
		ours, err := runOurs(cfg, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		r := result{name: p.name, ours: ours, buf: map[string][]string{}}
		for _, use := range []string{"WIRE_JSON", "WIRE", strings.Join(all, ",")} {
			ids, err := runBuf(cfg, p, use)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			r.buf[use] = ids
		}
		results = append(results, r)
	}
	fmt.Printf("compare-buf: %d pairs; msgcontract breaking at FULL vs buf breaking v1.75.0\n", len(results))
	fmt.Println("by buf category (msgcontract's CONTRACT and CODE rules set aside):")
	for _, cat := range []string{"WIRE_JSON", "WIRE"} {
		var agree, both, none, bufOnly, oursOnly int
		var diffs []string
		for _, r := range results {
			var mine []string
			for _, c := range []compat.Category{compat.Wire, compat.JSON, compat.RPC} {
				mine = append(mine, r.ours[c]...)
			}
			b := r.buf[cat]
			switch {
			case len(b) > 0 && len(mine) > 0:
				agree++
				both++
			case len(b) == 0 && len(mine) == 0:
				agree++
				none++
			case len(b) > 0:
				bufOnly++
				diffs = append(diffs, fmt.Sprintf("  %s: buf %v, msgcontract none", r.name, b))
			default:
				oursOnly++
				diffs = append(diffs, fmt.Sprintf("  %s: buf none, msgcontract %v", r.name, mine))
			}
		}
		fmt.Printf("%s: agree %d/%d (both break %d, both pass %d); buf only %d; msgcontract only %d\n",
			cat, agree, len(results), both, none, bufOnly, oursOnly)
		if cat == "WIRE_JSON" {
			for _, d := range diffs {
				fmt.Println(d)
			}
		}
	}
	fmt.Println("by msgcontract category (buf running the rules docs/compat-rules.md names as equivalents):")
	use := strings.Join(all, ",")
	for _, cat := range []compat.Category{compat.Wire, compat.JSON, compat.RPC, compat.Code} {
		var agree, bufOnly, oursOnly int
		for _, r := range results {
			var b []string
			for _, id := range r.buf[use] {
				if slices.Contains(equiv[cat], id) {
					b = append(b, id)
				}
			}
			mine := r.ours[cat]
			switch {
			case (len(b) > 0) == (len(mine) > 0):
				agree++
			case len(b) > 0:
				bufOnly++
			default:
				oursOnly++
			}
		}
		fmt.Printf("%s: agree %d/%d; buf only %d; msgcontract only %d\n", cat, agree, len(results), bufOnly, oursOnly)
	}
	return nil
}

// equivalents maps each category to the buf rules its rules name as
// equivalent breaks (names marked "(compatible)" are not breaks there).
func equivalents() map[compat.Category][]string {
	m := map[compat.Category][]string{}
	for _, r := range compat.Rules() {
		for _, name := range strings.Split(r.Buf, ", ") {
			if name == "" || strings.Contains(name, "(") {
				continue
			}
			if !slices.Contains(m[r.Category], name) {
				m[r.Category] = append(m[r.Category], name)
			}
		}
	}
	return m
}

func runOurs(cfg config, p pair) (map[compat.Category][]string, error) {
	cmd := msgcontractCmd(cfg, p, "--format", "json", "--code")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := checkExit(cmd, cmd.Run(), stderr.Bytes(), []int{0, 1}); err != nil {
		return nil, err
	}
	var rep struct {
		Violations []struct {
			Rule     string `json:"rule"`
			Category string `json:"category"`
		} `json:"violations"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, err
	}
	out := map[compat.Category][]string{}
	for _, v := range rep.Violations {
		c := compat.Category(v.Category)
		if !slices.Contains(out[c], v.Rule) {
			out[c] = append(out[c], v.Rule)
		}
	}
	return out, nil
}

// runBuf returns the sorted rule IDs buf reports.
func runBuf(cfg config, p pair, use string) ([]string, error) {
	cmd := bufCmd(cfg, p, use, true)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := checkExit(cmd, cmd.Run(), append(stdout.Bytes(), stderr.Bytes()...), []int{0, 100}); err != nil {
		return nil, err
	}
	var ids []string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var f struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("buf output %q: %w", sc.Text(), err)
		}
		if !slices.Contains(ids, f.Type) {
			ids = append(ids, f.Type)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func quoteList(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, ",")
}
