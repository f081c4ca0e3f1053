/** Packet captures: a tap that records any link's frames to a pcap file (pcap4j/libpcap). */
package dev.tern.ethernet.pcap;
