package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// AllowDownloads makes the browser of tab save what its pages download
// (a link with a download attribute, a Blob URL among them) into dir under
// the name the page gives, instead of asking where: headless Chromium
// refuses downloads until told where they go (Browser.setDownloadBehavior).
func AllowDownloads(tab context.Context, dir string) error {
	_, err := chromedp.Call(tab, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior:     browser.SetDownloadBehaviorBehaviorAllow,
		DownloadPath: dir,
	})
	if err != nil {
		return fmt.Errorf("allow downloads into %s: %w", dir, err)
	}
	return nil
}

// Downloaded waits, until ctx ends, for the file name to be complete in dir
// (Chromium writes a download under a temporary name and renames it when
// it is done) and returns its content.
func Downloaded(ctx context.Context, dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			var names []string
			if entries, err := os.ReadDir(dir); err == nil {
				for _, e := range entries {
					names = append(names, e.Name())
				}
			}
			return nil, fmt.Errorf("no download %s in %s (it holds %q): %w", name, dir, names, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
