/** Packet captures: a tap that records any link's frames to a pcap file, written in plain Java (no libpcap). */
package dev.tern.ethernet.pcap;
