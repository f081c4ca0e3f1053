package dev.tern.conformance.interop;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.net.Ipv4Address;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An IGMPv3 Membership Report (RFC 3376 §4.2) read from a captured frame, with what RFC 3376 §4 asks of its
 * envelope: sent to 224.0.0.22 (MAC 01:00:5e:00:00:16) with TTL 1 and the IP Router Alert option (RFC 2113), IPv4
 * and IGMP checksums valid.
 */
record IgmpV3Report(int ttl, boolean routerAlert, boolean checksumsValid, long destinationMac, int destination,
                    List<Record> records) {
    static final int TYPE = 0x22;
    static final int MODE_IS_INCLUDE = 1;
    static final int MODE_IS_EXCLUDE = 2;
    static final int CHANGE_TO_INCLUDE = 3;
    static final int CHANGE_TO_EXCLUDE = 4;
    static final int ALLOW_NEW_SOURCES = 5;
    static final int BLOCK_OLD_SOURCES = 6;
    static final int ALL_V3_ROUTERS = 0xE000_0016;

    /** One group record: its type, the group, the sources. */
    record Record(int type, int group, List<Integer> sources) {
        @Override
        public String toString() {
            return "record type " + type + " " + Ipv4Address.format(group) + " " + sources.stream().map(Ipv4Address::format).toList();
        }
    }

    private static final int ETH = 14;

    /** True for an IPv4 frame carrying an IGMPv3 report. */
    static boolean is(CapturedFrame frame) {
        if (frame.ipProtocol() != 2 || frame.isLaterFragment()) {
            return false;
        }
        final int at = ETH + (frame.u8(ETH) & 0x0F) * 4;
        return at < frame.length() && frame.u8(at) == TYPE;
    }

    static IgmpV3Report parse(CapturedFrame frame) {
        final int headerLength = (frame.u8(ETH) & 0x0F) * 4;
        final int total = frame.u16(ETH + 2);
        final MemorySegment bytes = MemorySegment.ofArray(frame.bytes());
        final boolean ipOk = InternetChecksum.verifies(InternetChecksum.add(0, bytes, ETH, headerLength));
        final int at = ETH + headerLength;
        final boolean igmpOk = InternetChecksum.verifies(InternetChecksum.add(0, bytes, at, total - headerLength));
        // RFC 2113: option type 148 (copied, class 0, number 20), length 4, value 0.
        final boolean routerAlert = headerLength >= 24 && frame.u8(ETH + 20) == 0x94 && frame.u8(ETH + 21) == 4
            && frame.u16(ETH + 22) == 0;
        final int count = frame.u16(at + 6);
        final List<Record> records = new ArrayList<>();
        int r = at + 8;
        for (int i = 0; i < count; i++) {
            final int type = frame.u8(r);
            final int auxWords = frame.u8(r + 1);
            final int sources = frame.u16(r + 2);
            final int group = frame.i32(r + 4);
            final List<Integer> list = new ArrayList<>();
            for (int s = 0; s < sources; s++) {
                list.add(frame.i32(r + 8 + 4 * s));
            }
            records.add(new Record(type, group, List.copyOf(list)));
            r += 8 + 4 * sources + 4 * auxWords;
        }
        return new IgmpV3Report(frame.u8(ETH + 8), routerAlert, ipOk && igmpOk, frame.destination(), frame.i32(ETH + 16),
            List.copyOf(records));
    }

    /** Well-formed as RFC 3376 §4 asks: to 224.0.0.22 at its MAC, TTL 1, Router Alert, checksums valid. */
    boolean wellFormed() {
        return destination == ALL_V3_ROUTERS && destinationMac == 0x0100_5E00_0016L && ttl == 1 && routerAlert && checksumsValid;
    }
}
