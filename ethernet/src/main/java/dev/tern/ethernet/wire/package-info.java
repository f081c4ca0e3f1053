/** Ethernet wire formats: MAC addresses, Ethernet II / 802.1Q headers. No state, no time. */
package dev.tern.ethernet.wire;
