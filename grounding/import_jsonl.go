package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// rawTrajectory is one JSON Lines record of the canonical or OpenAI-chat
// format. Both share the canonical field names; OpenAI-chat records usually
// carry only messages, tools and perhaps hidden and reward.
type rawTrajectory struct {
	ID, ParentID, Domain, Request, Tools, Reward, Success, Messages, Hidden, Meta json.RawMessage
}

func (t *rawTrajectory) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "id":
		t.ID = val
	case "parent_id":
		t.ParentID = val
	case "domain":
		t.Domain = val
	case "request":
		t.Request = val
	case "tools":
		t.Tools = val
	case "reward":
		t.Reward = val
	case "success":
		t.Success = val
	case "messages":
		t.Messages = val
	case "hidden":
		t.Hidden = val
	case "meta":
		t.Meta = val
	}
}

// readLines imports a JSON Lines file, one trajectory per non-blank line.
// Blank lines are skipped but counted, so Line always matches an editor. A
// file without any record is the error "file is empty", as in Detect.
func (imp *fileImport) readLines(br *bufio.Reader, yield func(*Trajectory, error) bool) {
	var buf []byte
	record := 0
	for line := 1; ; line++ {
		rec, err := readLine(br, &buf)
		switch {
		case errors.Is(err, io.EOF) && record == 0:
			yield(nil, &ImportError{File: imp.file, Record: -1, Err: errEmptyFile})
			return
		case errors.Is(err, io.EOF):
			return
		case errors.Is(err, errRecordTooLarge):
			yield(nil, tooLargeError(imp.file, record, line))
			return
		case err != nil:
			yield(nil, withFileName(err, imp.file))
			return
		}
		if len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		if !utf8.Valid(rec) {
			yield(nil, &ImportError{File: imp.file, Record: record, Line: line,
				Expected: "UTF-8 text", Got: invalidUTF8At(rec)})
			return
		}
		t, ierr := imp.lineRecord(rec, record, line)
		if ierr == nil {
			ierr = imp.unique(t, "id")
		}
		if ierr != nil {
			yield(nil, ierr)
			return
		}
		if !yield(t, nil) {
			return
		}
		record++
	}
}

// readLine returns the next line of br without its line ending, or io.EOF
// after the last one. The slice is valid until the next call. A line longer
// than recordLimit gives errTooLarge as soon as that many bytes were seen, so
// a huge line never sits in memory.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	line := frag
	if errors.Is(err, bufio.ErrBufferFull) {
		*buf = append((*buf)[:0], frag...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(*buf) > recordLimit+2 { // +2: a CRLF ending is not content
				return nil, errRecordTooLarge
			}
			frag, err = br.ReadSlice('\n')
			*buf = append(*buf, frag...)
		}
		line = *buf
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > recordLimit {
		return nil, errRecordTooLarge
	}
	return line, nil
}

// lineRecord maps one canonical or OpenAI-chat record.
func (imp *fileImport) lineRecord(rec []byte, record, line int) (*Trajectory, *ImportError) {
	d := imp.newDecoder(record, line)
	if !json.Valid(rec) {
		return nil, recordSyntaxError(d, rec, json.Unmarshal(rec, new(json.RawMessage)))
	}
	var raw rawTrajectory
	if !d.object(rec, rootPath, "a JSON object (one trajectory per line)", raw.set) {
		return nil, d.err
	}
	t := &Trajectory{Source: Source{Format: string(imp.format), File: imp.file, Index: record, Line: line}}
	t.ID = d.str(raw.ID, rootPath.at("id"))
	if d.err == nil && t.ID == "" {
		// An id that is present but empty is a mistake in either format;
		// only an absent id is named after the file.
		if imp.format == FormatCanonical || len(raw.ID) > 0 && string(raw.ID) != "null" {
			d.fail(rootPath.at("id"), "a non-empty string", describeRaw(raw.ID))
		} else {
			// OpenAI-chat records rarely carry ids: name them after the
			// file and the record so re-imports produce the same ids.
			base := imp.base
			if base == "" {
				base = "record"
			}
			t.ID = base + "-" + strconv.Itoa(record)
		}
	}
	t.ParentID = d.str(raw.ParentID, rootPath.at("parent_id"))
	t.Domain = d.str(raw.Domain, rootPath.at("domain"))
	t.Request = d.str(raw.Request, rootPath.at("request"))
	t.Tools = d.tools(raw.Tools, rootPath.at("tools"))
	t.Reward = d.number(raw.Reward, rootPath.at("reward"))
	t.Success = d.boolean(raw.Success, rootPath.at("success"))
	if d.err == nil && jsonKind(raw.Messages) != '[' {
		d.fail(rootPath.at("messages"), "an array of messages", describeRaw(raw.Messages))
	}
	items := d.array(raw.Messages, rootPath.at("messages"), "an array of messages")
	if d.err == nil {
		t.Messages = d.messages(items, rootPath.at("messages"))
	}
	t.Hidden = d.hidden(raw.Hidden, rootPath.at("hidden"), len(items))
	if jsonPresent(raw.Meta) {
		t.Meta = cloneRaw(raw.Meta)
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}

// syntaxError reports a record that is not valid JSON; one nested too deep
// names the field where it gets too deep.
func recordSyntaxError(d *recordDecoder, rec []byte, err error) *ImportError {
	expected, got := jsonSyntaxProblem(err)
	d.fail(rootPath, expected, got)
	d.err.Err = err
	if isMaxDepth(err) {
		d.err.Field = tooDeepField(rec)
	}
	return d.err
}
