/** IPv6 (RFC 8200), ICMPv6 (RFC 4443), neighbour discovery (RFC 4861) with RFC 4862 duplicate address detection, and MLDv2 (RFC 3810) for the stack's own groups. */
package dev.tern.ipv6;
