package dev.tern.arp.wire;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.MacAddress;

/**
 * An Ethernet/IPv4 ARP packet as values, for tests, tools and fuzzers.
 *
 * @param operation {@link ArpPacket#OPERATION_REQUEST} or {@link ArpPacket#OPERATION_REPLY}
 * @param senderMac sender hardware address
 * @param senderIp  sender protocol address
 * @param targetMac target hardware address (zero in requests)
 * @param targetIp  target protocol address
 */
public record ArpRepr(int operation, long senderMac, int senderIp, long targetMac, int targetIp) {
    public static ArpRepr parse(ArpPacket packet) {
        return new ArpRepr(packet.operation(), packet.senderMac(), packet.senderIp(), packet.targetMac(), packet.targetIp());
    }

    public void emit(ArpPacket packet) {
        packet.write(operation, senderMac, senderIp, targetMac, targetIp);
    }

    /** A request is gratuitous when sender and target protocol addresses are equal (RFC 5227 §3 announcement). */
    public boolean isGratuitous() {
        return senderIp == targetIp;
    }

    @Override
    public String toString() {
        return operation == ArpPacket.OPERATION_REQUEST
            ? "who-has " + Ipv4Address.format(targetIp) + " tell " + Ipv4Address.format(senderIp) + " (" + MacAddress.format(senderMac) + ")"
            : Ipv4Address.format(senderIp) + " is-at " + MacAddress.format(senderMac);
    }
}
