package views

// ExportPage is the download page: a form that builds the export link and
// the live count of what the link will download.
type ExportPage struct {
	Form      ExportForm
	Count     ExportCount
	TokensURL string
}

// ExportForm is the export form's state. It works as a plain GET form
// (reloading the page with the count) and, with htmx, refreshes only the
// count region as fields change.
type ExportForm struct {
	Runs         []Option
	Views        []Option
	Formats      []Option
	Scales       []Option
	Domains      []Option
	Sources      []Option
	Complete     []Option
	IncludeEmpty bool
	IDs          bool
	Limit        string
}

// ExportCount is the live region: what the link downloads right now, or
// why there is no link.
type ExportCount struct {
	Error        string // a problem with the form: no link
	Trajectories string
	Decisions    string
	Supervised   string
	Parents      string
	Snapshot     string // when it was counted
	Empty        bool   // nothing matches: the link would download a header and a trailer
	URL          string // the download link (relative)
	Curl         string // the same download for scripts
	FileName     string
	// CountURL, when not "", is where the figures are still to be fetched
	// from: the page does not wait on a count over the run.
	CountURL string
}

// TokensPage lists the user's API tokens with a form to make another.
type TokensPage struct {
	Form      TokenForm
	New       *NewToken // the token just made, shown once
	Rows      []TokenRow
	ExportURL string
}

// TokenForm is the new-token form's state.
type TokenForm struct {
	Name  string
	Error string
}

// NewToken is a token just made: its secret appears this once.
type NewToken struct {
	Name   string
	Secret string
	Curl   string
}

// TokenRow is one token in the list.
type TokenRow struct {
	Name      string
	Prefix    string // "gw_AbC123…"
	Created   string
	LastUsed  string // "never" when unused
	Revoked   string // when revoked, else ""
	RevokeURL string // "" once revoked
}
