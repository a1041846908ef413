// Package multiinstance holds the scale-out test: two payments-service
// instances and two BFF instances on one PostgreSQL database, driven the way
// a load balancer would spread a browser's requests over them (README
// "Running several instances"). It has no code of its own; the test is the
// point.
package multiinstance
