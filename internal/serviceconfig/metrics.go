package serviceconfig

import (
	"github.com/prometheus/client_golang/prometheus"

	"paywallet/service/store/sqlstore"
)

// registerStoreMetrics adds the database's series to reg: functions over
// the store's counters (sqlstore.Stats), read at scrape time without a
// query.
func registerStoreMetrics(reg *prometheus.Registry, st *sqlstore.DB) error {
	stats := st.Stats
	gauge := func(name, help string, f func(sqlstore.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(stats()) })
	}
	counter := func(name, help string, f func(sqlstore.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(stats()) })
	}
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "payments_db_connections", Help: "Open database connections by state.",
			ConstLabels: prometheus.Labels{"state": "in_use"}}, func() float64 { return float64(stats().Pool.InUse) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "payments_db_connections", Help: "Open database connections by state.",
			ConstLabels: prometheus.Labels{"state": "idle"}}, func() float64 { return float64(stats().Pool.Idle) }),
		gauge("payments_db_connections_max", "The most database connections the pool opens (0: no limit).",
			func(s sqlstore.Stats) float64 { return float64(s.Pool.MaxOpenConnections) }),
		counter("payments_db_wait_total", "Times a transaction waited for a free database connection.",
			func(s sqlstore.Stats) float64 { return float64(s.Pool.WaitCount) }),
		counter("payments_db_wait_seconds_total", "Time transactions spent waiting for a free database connection.",
			func(s sqlstore.Stats) float64 { return s.Pool.WaitDuration.Seconds() }),
		counter("payments_db_commits_total", "Database transactions committed.",
			func(s sqlstore.Stats) float64 { return float64(s.Commits) }),
		counter("payments_db_tx_retries_total", "Transaction runs repeated after a lost race (serialization failure, deadlock) or a connection lost before COMMIT.",
			func(s sqlstore.Stats) float64 { return float64(s.Retries) }),
		counter("payments_db_unavailable_total", "Transactions given up because the database went away (answered 503 SERVICE_UNAVAILABLE).",
			func(s sqlstore.Stats) float64 { return float64(s.Unavailable) }),
		counter("payments_db_contention_total", "Transactions given up after losing every retry to concurrent ones (answered 503 SERVICE_UNAVAILABLE).",
			func(s sqlstore.Stats) float64 { return float64(s.Contention) }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
