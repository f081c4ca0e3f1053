package dev.tern.nio;

import java.nio.channels.SelectionKey;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A selector's selected-key set: an array with each key's index kept in the key, so adding, finding and removing
 * are constant time and allocate nothing (a {@code HashSet} allocates a node per add). As the JDK's, the set handed
 * to users is ungrowable: {@link #add} throws, removal is allowed.
 *
 * <p>Owned by the selecting thread (the JDK's selected-key set is not thread-safe either).
 */
final class SelectedKeySet extends AbstractSet<SelectionKey> {
    private TernSelectionKey[] keys = new TernSelectionKey[16];
    private int size;
    private int modifications;

    /** The selector's own add; false if it was already there. */
    boolean addKey(TernSelectionKey key) {
        if (key.selectedIndex >= 0) {
            return false;
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
        }
        key.selectedIndex = size;
        keys[size++] = key;
        modifications++;
        return true;
    }

    @Override
    public boolean add(SelectionKey key) {
        throw new UnsupportedOperationException("the selected-key set is ungrowable");
    }

    @Override
    public boolean contains(Object o) {
        return o instanceof TernSelectionKey key && key.selectedIndex >= 0 && key.selectedIndex < size
            && keys[key.selectedIndex] == key;
    }

    @Override
    public boolean remove(Object o) {
        if (!contains(o)) {
            return false;
        }
        removeAt(((TernSelectionKey) o).selectedIndex);
        return true;
    }

    private void removeAt(int index) {
        final TernSelectionKey removed = keys[index];
        removed.selectedIndex = -1;
        final int last = --size;
        if (index != last) {
            keys[index] = keys[last];
            keys[index].selectedIndex = index;
        }
        keys[last] = null;
        modifications++;
    }

    @Override
    public void clear() {
        for (int i = 0; i < size; i++) {
            keys[i].selectedIndex = -1;
            keys[i] = null;
        }
        size = 0;
        modifications++;
    }

    @Override
    public int size() {
        return size;
    }

    /** Iterates in array order; {@code remove} moves the last key into the hole, which is visited next. */
    @Override
    public Iterator<SelectionKey> iterator() {
        return new Iterator<>() {
            private int next;
            private boolean canRemove;
            private int expected = modifications;

            @Override
            public boolean hasNext() {
                return next < size;
            }

            @Override
            public SelectionKey next() {
                if (expected != modifications) {
                    throw new ConcurrentModificationException();
                }
                if (next >= size) {
                    throw new NoSuchElementException();
                }
                canRemove = true;
                return keys[next++];
            }

            @Override
            public void remove() {
                if (!canRemove) {
                    throw new IllegalStateException();
                }
                if (expected != modifications) {
                    throw new ConcurrentModificationException();
                }
                canRemove = false;
                removeAt(--next);
                expected = modifications;
            }
        };
    }
}
