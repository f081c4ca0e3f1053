/** UDP: sockets with lock-free datagram rings, demultiplexing, broadcast and multicast delivery, ICMP errors. */
package dev.tern.udp;
