package dev.tern.tcp.testing;

import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.tcp.wire.TcpRepr;

import java.util.Arrays;

/** One TCP segment our stack sent, as the peer saw it on the wire, and when. */
public record Captured(long atNs, Ipv4Repr ip, TcpRepr tcp, byte[] payload, boolean checksumOk) {
    @Override
    public String toString() {
        return "@" + atNs / 1_000_000.0 + "ms " + tcp + (payload.length > 0 && payload.length <= 16
            ? " " + Arrays.toString(payload) : "") + (checksumOk ? "" : " BAD CHECKSUM");
    }
}
