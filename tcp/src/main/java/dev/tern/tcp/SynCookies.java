package dev.tern.tcp;

import dev.tern.core.hash.SipHash;

/**
 * SYN cookies (RFC 4987 §3.6): when a listener's SYN queue is full, the SYN-ACK's ISN encodes what the connection
 * needs, and no state is kept until the peer's ACK returns it.
 *
 * <pre>
 *   ISN (32 bits):  | count (8) | (F(key, peer address, ports, peer ISN, count) + mss index) mod 2^24 (24) |
 * </pre>
 *
 * {@code count} is a clock of 2^36 ns (about 69 s) ticks; a cookie is accepted for the tick it was made in and the
 * next one (69 to 137 s). The MSS index picks from {@link #MSS_TABLE} the largest value not above the peer's MSS. A
 * forged cookie passes with probability 8 / 2^24 per guess.
 *
 * <p>Deviation (see tcp/DESIGN.md): only the MSS survives. Window scaling, SACK and timestamps the SYN
 * offered are lost, so a connection made from a cookie runs with a 64 KiB window and without SACK; Linux recovers
 * them from the timestamp option, which we do not do yet.
 *
 * <p>Stateless apart from the key.
 */
final class SynCookies {
    /** MSS values a cookie can carry (Linux's four, plus larger ones for jumbo and memory links). */
    static final int[] MSS_TABLE = {536, 1300, 1440, 1460, 4312, 8960, 16344, 65495};
    private static final long DOMAIN_COOKIE = 0x4;
    private static final int COUNT_SHIFT = 36;

    private final long key0;
    private final long key1;

    SynCookies(long key0, long key1) {
        this.key0 = key0;
        this.key1 = key1 ^ 0x5C5C_5C5C_5C5C_5C5CL;
    }

    /** Index into {@link #MSS_TABLE} of the largest entry not above {@code mss}. */
    static int mssIndex(int mss) {
        int index = 0;
        for (int i = 0; i < MSS_TABLE.length; i++) {
            if (MSS_TABLE[i] <= mss) {
                index = i;
            }
        }
        return index;
    }

    private int hash(int remoteAddress, int remotePort, int localPort, int peerIsn, int count) {
        final long m0 = ((long) remoteAddress << 32) | (peerIsn & 0xFFFF_FFFFL);
        final long m1 = (DOMAIN_COOKIE << 56) | ((long) (count & 0xFF) << 32) | ((long) (remotePort & 0xFFFF) << 16)
            | (localPort & 0xFFFF);
        return (int) SipHash.hash(key0, key1, m0, m1);
    }

    private static int count(long nowNs) {
        return (int) (nowNs >> COUNT_SHIFT) & 0xFF;
    }

    /** The ISN for a SYN-ACK answering a SYN with sequence number {@code peerIsn}. */
    int encode(int remoteAddress, int remotePort, int localPort, int peerIsn, int mssIndex, long nowNs) {
        final int count = count(nowNs);
        return (count << 24) | ((hash(remoteAddress, remotePort, localPort, peerIsn, count) + mssIndex) & 0xFF_FFFF);
    }

    /** The MSS index a returned cookie ({@code SEG.ACK - 1}) carries, or -1 when it is not one of ours or too old. */
    int decode(int cookie, int remoteAddress, int remotePort, int localPort, int peerIsn, long nowNs) {
        final int count = cookie >>> 24;
        final int age = (count(nowNs) - count) & 0xFF;
        if (age > 1) {
            return -1;
        }
        final int index = (cookie - hash(remoteAddress, remotePort, localPort, peerIsn, count)) & 0xFF_FFFF;
        return index < MSS_TABLE.length ? index : -1;
    }
}
