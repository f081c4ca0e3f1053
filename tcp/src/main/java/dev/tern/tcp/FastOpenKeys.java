package dev.tern.tcp;

import dev.tern.core.hash.SipHash;

import java.security.SecureRandom;

/**
 * The server's secret for TCP Fast Open cookies (RFC 7413 §4.1.2): a primary key, which makes the cookies a server
 * gives, and an optional backup key, whose cookies are still accepted while clients move to the primary one (key
 * rotation, as Linux's {@code net.ipv4.tcp_fastopen_key="primary,backup"}).
 *
 * <p>The cookie is Linux's, so that a Tern server and a Linux server with the same key give a client the same
 * cookie: SipHash-2-4 under the 128-bit key of the 8 bytes client address then server address (network order),
 * its 64-bit result written least significant byte first. A key is two little-endian 64-bit halves of its 16 bytes;
 * written as Linux's sysctl writes it, four 32-bit hexadecimal words {@code w0-w1-w2-w3}, its bytes are each word
 * least significant byte first.
 *
 * @param key0    the primary key's bytes 0 to 7, little-endian
 * @param key1    the primary key's bytes 8 to 15, little-endian
 * @param backup  whether there is a backup key
 * @param backup0 the backup key's bytes 0 to 7 (0 without one)
 * @param backup1 the backup key's bytes 8 to 15 (0 without one)
 */
public record FastOpenKeys(long key0, long key1, boolean backup, long backup0, long backup1) {
    /** Bytes of the cookies Tern's server gives (Linux's TCP_FASTOPEN_COOKIE_SIZE). */
    public static final int COOKIE_LENGTH = 8;
    /** Bytes of one key (Linux's TCP_FASTOPEN_KEY_LENGTH). */
    public static final int KEY_LENGTH = 16;

    /** A primary key alone. */
    public static FastOpenKeys of(long key0, long key1) {
        return new FastOpenKeys(key0, key1, false, 0, 0);
    }

    /** A fresh random primary key, as Linux makes one at boot. */
    public static FastOpenKeys random() {
        final SecureRandom random = new SecureRandom();
        return of(random.nextLong(), random.nextLong());
    }

    /**
     * A key as the {@code TCP_FASTOPEN_KEY} socket option gives it: 16 bytes (a primary key) or 32 (primary then
     * backup). Any other length is refused.
     */
    public static FastOpenKeys ofBytes(byte[] bytes) {
        if (bytes.length != KEY_LENGTH && bytes.length != 2 * KEY_LENGTH) {
            throw new IllegalArgumentException("a Fast Open key is 16 bytes, or 32 with a backup key; got "
                + bytes.length);
        }
        final long k0 = littleEndian(bytes, 0);
        final long k1 = littleEndian(bytes, 8);
        return bytes.length == KEY_LENGTH ? of(k0, k1)
            : new FastOpenKeys(k0, k1, true, littleEndian(bytes, 16), littleEndian(bytes, 24));
    }

    /**
     * A key as Linux's sysctl {@code net.ipv4.tcp_fastopen_key} writes it: {@code w0-w1-w2-w3}, four hexadecimal
     * 32-bit words, optionally followed by {@code ,} and the backup key in the same form.
     */
    public static FastOpenKeys parse(String text) {
        return ofWords(words(text));
    }

    /** The 32-bit words of a key written as {@link #parse} reads it: four, or eight with a backup key. */
    public static long[] words(String text) {
        final String[] keys = text.strip().split(",", -1);
        if (keys.length > 2) {
            throw new IllegalArgumentException("at most two Fast Open keys (primary,backup), got '" + text + "'");
        }
        final long[] w = new long[4 * keys.length];
        for (int k = 0; k < keys.length; k++) {
            final String[] words = keys[k].strip().split("-", -1);
            if (words.length != 4) {
                throw new IllegalArgumentException("a Fast Open key is four hexadecimal words w0-w1-w2-w3, got '"
                    + keys[k].strip() + "'");
            }
            for (int i = 0; i < 4; i++) {
                if (!words[i].matches("(0x)?[0-9a-fA-F]{1,8}")) {
                    throw new IllegalArgumentException("'" + words[i] + "' is not a 32-bit hexadecimal word (in '"
                        + keys[k].strip() + "')");
                }
                w[4 * k + i] = Long.parseLong(words[i].replaceFirst("^0x", ""), 16);
            }
        }
        return w;
    }

    /** A key of four 32-bit words {@code w0-w1-w2-w3} (or eight, with the backup key), as the sysctl writes it. */
    public static FastOpenKeys ofWords(long... w) {
        if (w.length != 4 && w.length != 8) {
            throw new IllegalArgumentException("a Fast Open key is 4 words, or 8 with a backup key; got " + w.length);
        }
        // Each word's bytes least significant first, as Linux's sysctl stores them (cpu_to_le32).
        final long k0 = w[1] << 32 | w[0];
        final long k1 = w[3] << 32 | w[2];
        return w.length == 4 ? of(k0, k1) : new FastOpenKeys(k0, k1, true, w[5] << 32 | w[4], w[7] << 32 | w[6]);
    }

    private static long littleEndian(byte[] bytes, int at) {
        long value = 0;
        for (int i = 7; i >= 0; i--) {
            value = value << 8 | (bytes[at + i] & 0xFF);
        }
        return value;
    }

    /** The cookie the primary key gives {@code client} talking to {@code server}: its 8 bytes, the first on top. */
    public long cookie(int client, int server) {
        return cookie(key0, key1, client, server);
    }

    /**
     * Which key made {@code cookie} (8 bytes, first on top) for these addresses: 1 the primary, 2 the backup, 0
     * neither (Linux's tcp_fastopen_cookie_gen_check).
     */
    int check(long cookie, int client, int server) {
        if (cookie(key0, key1, client, server) == cookie) {
            return 1;
        }
        return backup && cookie(backup0, backup1, client, server) == cookie ? 2 : 0;
    }

    private static long cookie(long k0, long k1, int client, int server) {
        // The addresses' 8 bytes in network order, read as a little-endian word (SipHash's message), and the hash
        // written least significant byte first, as Linux stores cpu_to_le64(siphash(...)).
        final long message = Integer.reverseBytes(client) & 0xFFFF_FFFFL
            | (long) Integer.reverseBytes(server) << 32;
        return Long.reverseBytes(SipHash.hash(k0, k1, message));
    }

    @Override
    public String toString() {
        // A secret: never printed.
        return "FastOpenKeys[" + (backup ? "primary and backup" : "primary") + "]";
    }
}
