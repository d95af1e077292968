// Command screenshots logs in to a running groundwork and saves a PNG of
// each page given, for looking at the UI the way a user sees it:
//
//	go run ./scripts/screenshots -url http://localhost:8080 -user admin -password PW -out /tmp/shots /runs /runs/1
//
// It drives Debian's chromium headless (CHROMIUM_PATH overrides).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	base := flag.String("url", "http://localhost:8080", "groundwork base URL")
	user := flag.String("user", "admin", "account name")
	password := flag.String("password", "", "account password")
	out := flag.String("out", "screenshots", "output directory")
	width := flag.Int("width", 1400, "window width")
	height := flag.Int("height", 1000, "window height")
	full := flag.Bool("full", true, "capture the whole page, not just the window")
	flag.Parse()
	if err := run(*base, *user, *password, *out, *width, *height, *full, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(base, user, password, out string, width, height int, full bool, paths []string) error {
	exe := os.Getenv("CHROMIUM_PATH")
	if exe == "" {
		exe = "chromium"
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "gw-shots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(dir), chromedp.WindowSize(width, height))
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav`)),
	); err != nil {
		return fmt.Errorf("log in: %w", err)
	}
	for i, p := range paths {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p), chromedp.Sleep(700*time.Millisecond)); err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		shot := chromedp.CaptureScreenshot()
		if full {
			shot = chromedp.FullScreenshot(100)
		}
		buf, err := chromedp.Run(ctx, shot)
		if err != nil {
			return fmt.Errorf("screenshot %s: %w", p, err)
		}
		name := fmt.Sprintf("%02d-%s.png", i+1, strings.Trim(strings.NewReplacer("/", "_", "?", "_", "&", "_", "=", "-").Replace(p), "_"))
		if err := os.WriteFile(filepath.Join(out, name), buf, 0o644); err != nil {
			return err
		}
		fmt.Println(filepath.Join(out, name))
	}
	return nil
}
