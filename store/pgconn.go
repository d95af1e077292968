package store

import (
	"bufio"
	"context"
	"database/sql"
	"net"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// pgReadBuffer is the read buffer each Postgres connection gets under lib/pq's
// own. lib/pq reads its socket through a 4 KB bufio.Reader: a 154 MB SFT
// export made 49,000 read system calls. With 64 KB beneath it, 17,000
// (Postgres sends rows as it produces them, so a call often finds less than
// the buffer), and lib/pq's small reads become copies from memory. 32 idle
// connections hold 2 MB of it.
const pgReadBuffer = 64 << 10

// openPostgres opens dsn through lib/pq with bufferedDialer.
func openPostgres(dsn string) (*sqlx.DB, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	c.Dialer(bufferedDialer{})
	return sqlx.NewDb(sql.OpenDB(c), "postgres"), nil
}

// bufferedDialer dials as lib/pq's default dialer does and wraps each
// connection's reads in a pgReadBuffer-sized buffer. TLS, when the DSN asks
// for it, runs above the buffer.
type bufferedDialer struct{ d net.Dialer }

func (b bufferedDialer) Dial(network, address string) (net.Conn, error) {
	return b.DialContext(context.Background(), network, address)
}

func (b bufferedDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return b.DialContext(ctx, network, address)
}

func (b bufferedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := b.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, pgReadBuffer)}, nil
}

// bufferedConn is a net.Conn whose reads go through r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
