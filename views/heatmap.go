package views

import (
	"strconv"
	"unicode/utf8"
)

// Heatmap geometry, in SVG user units (pixels at 100%).
const (
	hmCellW    = 30 // default cell width
	hmCellH    = 24
	hmPad      = 8
	hmCharW    = 6.6 // average width of a 11px label character
	hmMaxLeft  = 250
	hmMaxTop   = 190
	hmRotation = -45
)

// hmLayout is where a heatmap's parts go.
type hmLayout struct {
	left, top  int // the matrix's top-left corner
	cw, ch     int
	width      int
	height     int
	horizontal bool // column labels fit horizontally
}

func heatLayout(h Heatmap) hmLayout {
	l := hmLayout{cw: h.CellWidth, ch: hmCellH}
	if l.cw <= 0 {
		l.cw = hmCellW
	}
	rowChars, colChars := runeLen(h.RowTitle), 0
	for _, r := range h.Rows {
		rowChars = max(rowChars, runeLen(r))
	}
	for _, c := range h.Cols {
		colChars = max(colChars, runeLen(c))
	}
	l.left = min(hmMaxLeft, hmPad+int(float64(rowChars)*hmCharW)+hmPad)
	l.horizontal = float64(colChars)*hmCharW <= float64(l.cw-4)
	if l.horizontal {
		l.top = 2*hmPad + 14 + 14
	} else {
		// A label rotated by 45° rises by about 0.71 of its length.
		l.top = min(hmMaxTop, 2*hmPad+14+int(float64(colChars)*hmCharW*0.71))
	}
	l.width = l.left + l.cw*len(h.Cols) + 2*hmPad
	if !l.horizontal {
		// The last labels lean right past the matrix.
		l.width += min(hmMaxTop, int(float64(colChars)*hmCharW*0.71))
	}
	l.height = l.top + l.ch*len(h.Rows) + hmPad
	return l
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func px(n int) string { return strconv.Itoa(n) }

// cellX and cellY are the top-left corner of cell (r, c).
func (l hmLayout) cellX(c int) int { return l.left + c*l.cw }
func (l hmLayout) cellY(r int) int { return l.top + r*l.ch }

// colLabelTransform rotates a column label about its anchor.
func (l hmLayout) colLabelTransform(c int) string {
	x, y := l.cellX(c)+l.cw/2, l.top-6
	return "rotate(" + strconv.Itoa(hmRotation) + " " + strconv.Itoa(x) + " " + strconv.Itoa(y) + ")"
}

// deficitMark is the corner triangle of a deficit cell.
func (l hmLayout) deficitMark(r, c int) string {
	x, y := l.cellX(c), l.cellY(r)
	return "M" + strconv.Itoa(x+1) + " " + strconv.Itoa(y+1) + "h9l-9 9z"
}

func binClass(b int) string { return "hm-cell hm-b" + strconv.Itoa(b) }

func valueClass(b int) string {
	if b >= 4 {
		return "hm-val hm-val-light"
	}
	return "hm-val"
}

// shown is a cell's value as drawn: nothing for zero (an empty cell reads
// faster than a grid of zeros).
func shown(c HeatCell) string {
	if c.Value == "0" {
		return ""
	}
	return c.Value
}

// barHeight scales a histogram bar: value/max of full, at least 1 for any
// non-zero value.
func barHeight(value, maxValue, full int) int {
	if value <= 0 || maxValue <= 0 {
		return 0
	}
	return max(1, value*full/maxValue)
}
