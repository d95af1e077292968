package handlers

import "net/http"

// Request and response headers of htmx 2 that groundwork uses.
const (
	HXRequest        = "HX-Request"
	HXBoosted        = "HX-Boosted"
	HXHistoryRestore = "HX-History-Restore-Request"
	HXCurrentURL     = "HX-Current-URL"
	HXTarget         = "HX-Target"

	HXRedirect = "HX-Redirect"
	HXRetarget = "HX-Retarget"
	HXReswap   = "HX-Reswap"
	HXPushURL  = "HX-Push-Url"
)

// IsHTMX reports whether htmx sent r (boosted or not).
func IsHTMX(r *http.Request) bool { return r.Header.Get(HXRequest) == "true" }

// isPartial reports whether r wants a fragment rather than a full page: an
// htmx request that is neither boosted navigation nor a history restore
// (both of which replace the whole body and need the layout).
func isPartial(r *http.Request) bool {
	return IsHTMX(r) && r.Header.Get(HXBoosted) == "" && r.Header.Get(HXHistoryRestore) == ""
}
