package lighthouse

import (
	"reflect"
	"strings"
	"testing"
)

// report is a Lighthouse JSON report cut down to what Parse reads, in the
// shape Lighthouse 12 writes it.
const report = `{
  "lighthouseVersion": "12.8.2",
  "configSettings": {"formFactor": "mobile"},
  "environment": {"benchmarkIndex": 1432.5},
  "runWarnings": ["The page loaded too slowly to finish within the time limit."],
  "categories": {
    "performance": {"score": 0.874, "auditRefs": [
      {"id": "first-contentful-paint", "weight": 10}, {"id": "largest-contentful-paint", "weight": 25},
      {"id": "total-blocking-time", "weight": 30}, {"id": "unused-javascript", "weight": 0}]},
    "accessibility": {"score": 0.96, "auditRefs": [
      {"id": "color-contrast", "weight": 7}, {"id": "target-size", "weight": 7}, {"id": "label", "weight": 7}]},
    "best-practices": {"score": 1, "auditRefs": [{"id": "errors-in-console", "weight": 1}]},
    "seo": {"score": 0.5, "auditRefs": [{"id": "meta-description", "weight": 1}]}
  },
  "audits": {
    "first-contentful-paint": {"title": "First Contentful Paint", "score": 0.9, "scoreDisplayMode": "numeric", "numericValue": 1800.5, "displayValue": "1.8 s"},
    "largest-contentful-paint": {"title": "Largest Contentful Paint", "score": 0.7, "scoreDisplayMode": "numeric", "numericValue": 3100, "displayValue": "3.1 s"},
    "total-blocking-time": {"title": "Total Blocking Time", "score": 1, "scoreDisplayMode": "numeric", "numericValue": 20},
    "unused-javascript": {"title": "Reduce unused JavaScript", "score": 0.5, "scoreDisplayMode": "metricSavings"},
    "cumulative-layout-shift": {"title": "Cumulative Layout Shift", "score": 1, "numericValue": 0.012},
    "speed-index": {"title": "Speed Index", "score": 1, "numericValue": 2000},
    "interactive": {"title": "Time to Interactive", "score": 1, "numericValue": 3300},
    "total-byte-weight": {"title": "Avoids enormous network payloads", "score": 1, "numericValue": 812345},
    "color-contrast": {"title": "Background and foreground colors do not have a sufficient contrast ratio.", "score": 0, "scoreDisplayMode": "binary"},
    "target-size": {"title": "Touch targets do not have sufficient size or spacing.", "score": null, "scoreDisplayMode": "notApplicable"},
    "label": {"title": "Form elements have associated labels", "score": 1, "scoreDisplayMode": "binary"},
    "errors-in-console": {"title": "No browser errors logged to the console", "score": 1, "scoreDisplayMode": "binary"},
    "meta-description": {"title": "Document does not have a meta description", "score": 0, "scoreDisplayMode": "binary"}
  }
}`

func TestParse(t *testing.T) {
	run, version, err := Parse([]byte(report))
	if err != nil {
		t.Fatal(err)
	}
	if version != "12.8.2" || run.FormFactor != "mobile" || run.BenchmarkIndex != 1432.5 {
		t.Errorf("version %q, form factor %q, benchmark index %v", version, run.FormFactor, run.BenchmarkIndex)
	}
	// Rounded to whole points; a category not asked for (seo) is left out.
	if want := map[string]int{"performance": 87, "accessibility": 96, "best-practices": 100}; !reflect.DeepEqual(run.Scores, want) {
		t.Errorf("scores %v, want %v", run.Scores, want)
	}
	want := Metrics{FCPMs: 1800.5, LCPMs: 3100, TBTMs: 20, CLS: 0.012, SpeedIndexMs: 2000, TTIMs: 3300, Bytes: 812345}
	if run.Metrics != want {
		t.Errorf("metrics %+v, want %+v", run.Metrics, want)
	}
	// Weighted audits below 1, heaviest loss first: color-contrast loses 7,
	// LCP 25 × 0.3 = 7.5, FCP 1. Weight 0 (unused-javascript), not
	// applicable (target-size) and passed audits cost nothing.
	var ids []string
	for _, a := range run.Failing {
		ids = append(ids, a.Category+"/"+a.ID)
	}
	if got, want := strings.Join(ids, " "), "performance/largest-contentful-paint accessibility/color-contrast performance/first-contentful-paint"; got != want {
		t.Errorf("failing audits %q, want %q", got, want)
	}
	if len(run.Warnings) != 1 || !strings.HasPrefix(run.Warnings[0], "Lighthouse warned: The page loaded too slowly") {
		t.Errorf("warnings %q", run.Warnings)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"not JSON", `<html>`, "lighthouse report"},
		{"runtime error", `{"lighthouseVersion": "12.8.2", "runtimeError": {"code": "PROTOCOL_TIMEOUT", "message": "Waiting for DevTools protocol response has exceeded the allotted time."}, "categories": {}}`, "PROTOCOL_TIMEOUT"},
		{"no categories", `{"lighthouseVersion": "12.8.2", "categories": {}}`, "without categories"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := Parse([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}
