package store

// naturalKey is the key the run page sorts trajectory ids by: each run of
// ASCII digits padded with zeros to 20 (the digits of the largest uint64),
// so task2 sorts before task10 and trial9 before trial10. Runs of 20
// digits or more are kept as they are. Ids that differ only in leading
// zeros (task007, task7) share a key; the list breaks the tie by the id.
//
// Migration 00021 computes the same key in SQL for the trajectories
// stored before it (TestNaturalKeyBackfill holds the three to agreement).
func naturalKey(id string) string {
	b := make([]byte, 0, len(id)+2*naturalWidth)
	for i := 0; i < len(id); {
		if !isDigit(id[i]) {
			b = append(b, id[i])
			i++
			continue
		}
		j := i
		for j < len(id) && isDigit(id[j]) {
			j++
		}
		for k := j - i; k < naturalWidth; k++ {
			b = append(b, '0')
		}
		b = append(b, id[i:j]...)
		i = j
	}
	return string(b)
}

const naturalWidth = 20

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
