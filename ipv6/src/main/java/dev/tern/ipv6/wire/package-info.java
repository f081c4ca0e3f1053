/** IPv6 and ICMPv6 headers, read and written in place. */
package dev.tern.ipv6.wire;
