package grounding

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkScanProseRealAirline scans the text of the real τ-bench airline
// log's user messages and assistant replies as the checker does (scanProse),
// to measure the text scanner apart from the rest of Check.
func BenchmarkScanProseRealAirline(b *testing.B) {
	f, err := os.Open(tauAirline)
	if err != nil {
		b.Skipf("real τ-bench log not available (%v)", err)
	}
	defer f.Close()
	var texts []string
	n := 0
	for tr, err := range Read(f, tauAirline, FormatAuto) {
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range tr.Messages {
			if (m.Role == RoleUser || m.Role == RoleAssistant) && m.Content != "" && !looksJSON(m.Content) {
				texts = append(texts, m.Content)
				n += len(m.Content)
			}
		}
	}
	c := newChecker()
	c.sc = textScanner{smallAt: 9, refYear: 2024, refDate: [3]int{2024, 5, 15}}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range texts {
			c.scanProse(t, &c.rbuf)
		}
	}
}

// realReplies returns the lowered assistant replies of the real airline log.
func realReplies(b *testing.B) []string {
	f, err := os.Open(tauAirline)
	if err != nil {
		b.Skipf("real τ-bench log not available (%v)", err)
	}
	defer f.Close()
	var texts []string
	for tr, err := range Read(f, tauAirline, FormatAuto) {
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range tr.Messages {
			if m.Role == RoleAssistant && m.Content != "" && !looksJSON(m.Content) {
				texts = append(texts, strings.ToLower(m.Content))
			}
		}
	}
	return texts
}

// BenchmarkReplyPhrasesRealAirline runs the phrase searches a reply gets
// (count leads, done verbs, hypothetical phrases, confirmation prompts)
// over the real log's replies, lowered.
func BenchmarkReplyPhrasesRealAirline(b *testing.B) {
	texts := realReplies(b)
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range texts {
			countedStems(t)
			if mayReportDone(t) {
				hypotheticalSet.contains(t)
			}
			confirmPromptSet.contains(t)
		}
	}
}
