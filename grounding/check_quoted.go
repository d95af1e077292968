package grounding

import "strings"

// quotedPhrases checks the phrases a reply puts in quotes (the profile's
// quoted_phrases): in a customer-service reply a quote cites what the
// user, the policy or a tool said ('the order is in "pending (item
// modified)" status'), so a quoted phrase no visible message holds came
// from outside knowledge or nowhere, and the reply goes to a human
// (retail task62: '… is "The Raven" by Edgar Allan Poe', answering the
// user's trivia question; blind retail set 11 labelled it ambiguous).
// Quotes are paired in order within a paragraph, straight or curly, in
// a reply without braces (JSON or code quotes strings, not citations);
// phrases under three letters or over 80 bytes are not read, and the
// search ignores case and the punctuation around the phrase.
func (c *checker) quotedPhrases(d *DecisionResult, text string, msg int) int {
	if !c.p.QuotedPhrases || strings.IndexByte(text, '"') < 0 && !strings.Contains(text, "“") {
		return sevOK
	}
	if strings.IndexByte(text, '{') >= 0 {
		return sevOK // JSON or code: its quotes delimit strings, not citations
	}
	sev := sevOK
	for q0, q1 := range quotedSpans(text) {
		phrase := strings.Trim(text[q0:q1], " .,!?;:'")
		if len(phrase) < 3 || len(phrase) > 80 {
			continue
		}
		if c.visiblePhrase(strings.ToLower(phrase), msg) {
			continue
		}
		start := q0 + strings.Index(text[q0:q1], phrase)
		d.Args = append(d.Args, c.unsupportedSpan(start, phrase, "a phrase the reply quotes that no visible message holds: outside knowledge or invented"))
		sev = sevAmbiguous
	}
	return sev
}

// quotedSpans yields the byte spans of the text between paired quotes
// (", “ or ”), pairing them in order within each paragraph.
func quotedSpans(text string) func(yield func(int, int) bool) {
	return func(yield func(int, int) bool) {
		open := -1
		for i := 0; i < len(text); {
			n := 0
			switch {
			case text[i] == '"':
				n = 1
			case strings.HasPrefix(text[i:], "“"), strings.HasPrefix(text[i:], "”"):
				n = len("“")
			case text[i] == '\n':
				open = -1
			}
			if n == 0 {
				i++
				continue
			}
			if open < 0 {
				open = i + n
			} else {
				if !yield(open, i) {
					return
				}
				open = -1
			}
			i += n
		}
	}
}

// visiblePhrase reports whether a visible message before msg (its
// content, or an assistant message's call arguments) holds low, a
// lower-cased phrase.
func (c *checker) visiblePhrase(low string, msg int) bool {
	// The contents first, whose lowered text is kept per message; the
	// call arguments, lowered here, only when no content holds it.
	for j := msg - 1; j >= 0; j-- {
		m := &c.t.Messages[j]
		if !m.IsHidden() && m.Content != "" && strings.Contains(c.lowerContent(j), low) {
			return true
		}
	}
	for j := msg - 1; j >= 0; j-- {
		m := &c.t.Messages[j]
		if m.Role != RoleAssistant || m.IsHidden() || j >= len(c.firstCall) || c.firstCall[j] < 0 {
			continue
		}
		for k := range m.ToolCalls {
			if strings.Contains(strings.ToLower(c.calls[int(c.firstCall[j])+k].args), low) {
				return true
			}
		}
	}
	return false
}
