package grounding

import (
	"encoding/json"
	"strconv"
	"strings"
)

// hiddenOcc is the first occurrence of a key in hidden context.
type hiddenOcc struct {
	entry   int // index into Trajectory.Hidden, -1
	msg     int // hidden message index, -1
	kind    string
	knownAt int // message index from which the collector had it; -1 from the start
}

func (h hiddenOcc) describe(t *Trajectory) string {
	if h.entry >= 0 {
		return strings.ReplaceAll(h.kind, "_", " ") + " (hidden entry " + strconv.Itoa(h.entry) + ")"
	}
	kind := h.kind
	if kind == "" {
		kind = "hidden"
	}
	return "hidden message " + strconv.Itoa(h.msg) + " (" + kind + ")"
}

type hiddenText struct {
	text string
	occ  hiddenOcc
	// nums are the plain numbers the text states, scanned on first need
	// (hiddenContext); which tokens are numbers does not depend on the
	// scanner's reference date, so one scan serves every later call.
	nums    []hiddenNum
	scanned bool
}

type hiddenNum struct {
	v          float64
	start, end int
}

// buildHidden indexes the hidden context once, on first need: hidden
// messages and hidden entries (instructions, reference actions, …).
func (c *checker) buildHidden() {
	c.hiddenOK = true
	c.hidden.reset()
	c.hiddenOccs = c.hiddenOccs[:0]
	b := &c.hbuf
	saved := c.sc.out
	defer func() { c.sc.out = saved }()
	add := func(h hiddenOcc) {
		for i := range b.ms {
			key := b.key(&b.ms[i])
			hk := hashKey(key)
			j, slot, ok := c.hidden.findBytes(hk, key)
			switch {
			case !ok:
				c.hidden.insert(slot, hk, c.slab.cut(key), int32(len(c.hiddenOccs)))
				c.hiddenOccs = append(c.hiddenOccs, h)
			case h.knownAt < c.hiddenOccs[j].knownAt:
				c.hiddenOccs[j] = h
			}
		}
	}
	scan := func(content string, h hiddenOcc) {
		b.reset()
		c.sc.out = b
		if looksJSON(content) && c.jw.walkJSON(content, &c.sc) {
			add(h)
			c.collectHiddenStrings(content, h)
			return
		}
		c.sc.ctx = mention{obj: -1, valObj: -1}
		c.sc.scan(content, 0)
		c.sc.pendingMD = c.sc.pendingMD[:0]
		add(h)
		c.hidTexts = append(c.hidTexts, hiddenText{text: content, occ: h})
	}
	for i := range c.t.Messages {
		m := &c.t.Messages[i]
		if !m.IsHidden() {
			continue
		}
		scan(m.Content, hiddenOcc{entry: -1, msg: i, kind: m.HiddenKind, knownAt: i})
		for _, tc := range m.ToolCalls {
			scan(string(tc.Arguments), hiddenOcc{entry: -1, msg: i, kind: m.HiddenKind, knownAt: i})
		}
	}
	for i, h := range c.t.Hidden {
		at := -1
		if h.At != nil {
			at = *h.At
		}
		ho := hiddenOcc{entry: i, msg: -1, kind: h.Kind, knownAt: at}
		raw := strings.TrimSpace(string(h.Content))
		if strings.HasPrefix(raw, `"`) {
			var s string
			if json.Unmarshal(h.Content, &s) == nil {
				scan(s, ho)
				continue
			}
		}
		scan(raw, ho)
	}
}

// collectHiddenStrings keeps the string values of a hidden JSON document
// for context matching.
func (c *checker) collectHiddenStrings(content string, h hiddenOcc) {
	var w jsonWalker
	w.walkLeaves(content, func(w *jsonWalker, kind byte, s string, f float64, start, end int) {
		if kind == 's' && strings.IndexByte(s, ' ') > 0 {
			c.hidTexts = append(c.hidTexts, hiddenText{text: s, occ: h})
		}
	})
}

// hiddenFind looks keys up in the hidden context the collector had at msg.
func (c *checker) hiddenFind(keys []string, msg int) (hiddenOcc, bool) {
	if !c.hiddenOK {
		c.buildHidden()
	}
	for _, k := range keys {
		if j, ok := c.hidden.get(hashKeyStr(k), k); ok && c.hiddenOccs[j].knownAt <= msg {
			return c.hiddenOccs[j], true
		}
	}
	return hiddenOcc{}, false
}

// hiddenContext finds a small number stated next to one of the stems in
// hidden text ("You have 3 baggages").
func (c *checker) hiddenContext(v float64, st []string, msg int) (hiddenOcc, bool) {
	if !c.hiddenOK {
		c.buildHidden()
	}
	for i := range c.hidTexts {
		ht := &c.hidTexts[i]
		if ht.occ.knownAt > msg {
			continue
		}
		if !ht.scanned {
			c.scanHiddenNums(ht)
		}
		// Scanning a text drops the month/days waiting for a year, as the
		// scans here always did.
		c.sc.pendingMD = c.sc.pendingMD[:0]
		for _, n := range ht.nums {
			if n.v != v {
				continue
			}
			if anyStemMatch(st, nearWords(ht.text, n.start, n.end)) {
				return ht.occ, true
			}
		}
	}
	return hiddenOcc{}, false
}

// scanHiddenNums scans a hidden text for its plain numbers.
func (c *checker) scanHiddenNums(ht *hiddenText) {
	b := &c.hbuf
	saved := c.sc.out
	b.reset()
	c.sc.out = b
	c.sc.ctx = mention{obj: -1, valObj: -1}
	c.sc.scan(ht.text, 0)
	c.sc.pendingMD = c.sc.pendingMD[:0]
	c.sc.out = saved
	for i := range b.ms {
		if m := &b.ms[i]; m.kind == mNum {
			ht.nums = append(ht.nums, hiddenNum{m.num, int(m.start), int(m.end)})
		}
	}
	ht.scanned = true
}
