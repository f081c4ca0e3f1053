package dev.tern.core.testing;

/** The Internet checksum computed the slow, obvious way (RFC 1071 §4.1): the reference for property tests. */
public final class NaiveChecksum {
    private NaiveChecksum() {
    }

    public static int checksum(byte[] data, int offset, int length) {
        long sum = 0;
        int i = 0;
        for (; i + 1 < length; i += 2) {
            sum += ((data[offset + i] & 0xFF) << 8) | (data[offset + i + 1] & 0xFF);
        }
        if (i < length) {
            sum += (data[offset + i] & 0xFF) << 8;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int) (~sum & 0xFFFF);
    }
}
