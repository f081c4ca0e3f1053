/**
 * The AF_PACKET {@link dev.tern.ethernet.link.Link}: {@link dev.tern.afpacket.AfPacketLink} with a TPACKET_V3
 * receive ring and a TPACKET_V2 transmit ring, optional virtio-net header offloads and PACKET_FANOUT sharding.
 */
package dev.tern.afpacket;
