package dev.tern.nio;

import java.util.Arrays;

/**
 * The selection keys of one channel, so that the channel can attach each to its serving side once it decides it.
 * Copy-on-write: registering is rare, deciding happens once. Thread-safe.
 */
final class ChannelKeys {
    private static final TernSelectionKey[] NONE = new TernSelectionKey[0];
    private volatile TernSelectionKey[] keys = NONE;

    synchronized void add(TernSelectionKey key) {
        final TernSelectionKey[] more = Arrays.copyOf(keys, keys.length + 1);
        more[keys.length] = key;
        keys = more;
    }

    synchronized void remove(TernSelectionKey key) {
        final TernSelectionKey[] current = keys;
        for (int i = 0; i < current.length; i++) {
            if (current[i] == key) {
                final TernSelectionKey[] fewer = new TernSelectionKey[current.length - 1];
                System.arraycopy(current, 0, fewer, 0, i);
                System.arraycopy(current, i + 1, fewer, i, current.length - i - 1);
                keys = fewer;
                return;
            }
        }
    }

    /** The channel now has a side: each key attaches to it (and wakes its selector to watch it). */
    void decided() {
        for (TernSelectionKey key : keys) {
            key.selectorImpl().attach(key);
        }
    }
}
