/** ARP wire format (RFC 826) for IPv4 over Ethernet. No state, no time. */
package dev.tern.arp.wire;
