/** IPv4 and ICMP: input checks and dispatch, routing, fragmentation and reassembly, path MTU, ICMP errors. */
package dev.tern.ipv4;
