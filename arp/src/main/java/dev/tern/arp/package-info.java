/** ARP (RFC 826) and the neighbour cache: resolution, pending packets, reachability, announcements. */
package dev.tern.arp;
