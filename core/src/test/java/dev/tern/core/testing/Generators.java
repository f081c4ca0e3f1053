package dev.tern.core.testing;

import org.quicktheories.core.Gen;

import java.util.List;

import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

/** QuickTheories generators shared by the wire-format tests of every layer. */
public final class Generators {
    private Generators() {
    }

    /** Arbitrary bytes, {@code minLength..maxLength} long; shrinks towards shorter arrays of smaller bytes. */
    public static Gen<byte[]> bytes(int minLength, int maxLength) {
        return lists().of(integers().between(0, 255)).ofSizeBetween(minLength, maxLength).map(Generators::toBytes);
    }

    private static byte[] toBytes(List<Integer> values) {
        final byte[] bytes = new byte[values.size()];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (int) values.get(i);
        }
        return bytes;
    }
}
