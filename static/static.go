// Package static embeds groundwork's stylesheets and scripts: the app's own
// CSS and JS and a vendored, version-pinned htmx (its version is in its file
// name because htmx 4 changes how error responses are swapped).
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"sync"
)

// FS holds js/ and css/; web serves it under /static/.
//
//go:embed js css
var FS embed.FS

var (
	hashOnce sync.Once
	hashes   map[string]string
)

// URL returns the path under which web serves the embedded file name
// ("css/app.css"), with a short content hash as query so browsers may cache
// it for a year and still pick up a changed file after a deploy. An unknown
// name gets no hash.
func URL(name string) string {
	hashOnce.Do(func() {
		hashes = make(map[string]string)
		for _, dir := range []string{"js", "css"} {
			entries, err := FS.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				b, err := FS.ReadFile(dir + "/" + e.Name())
				if err != nil {
					continue
				}
				sum := sha256.Sum256(b)
				hashes[dir+"/"+e.Name()] = hex.EncodeToString(sum[:4])
			}
		}
	})
	if h, ok := hashes[name]; ok {
		return "/static/" + name + "?v=" + h
	}
	return "/static/" + name
}
