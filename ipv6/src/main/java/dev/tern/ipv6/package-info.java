/** IPv6 (RFC 8200), ICMPv6 (RFC 4443) and neighbour discovery (RFC 4861, RFC 4862 duplicate address detection). */
package dev.tern.ipv6;
