/** IPv4 and ICMP wire formats (RFC 791, RFC 792). No state, no time. */
package dev.tern.ipv4.wire;
