package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The control-block table's hand-numbered layout: every field has its own bytes. Each accessor pair is written with
 * all bits set in a zeroed row, and every other field must still read zero; offsets are aligned to their size and lie
 * inside the row.
 */
class TcpControlBlocksLayoutTest {
    /** A field: its getter and setter, taking the slot. */
    private record Accessor(String name, Method get, Method set) {
    }

    private static List<Accessor> accessors() throws NoSuchMethodException {
        final List<Accessor> found = new ArrayList<>();
        for (Method get : TcpControlBlocks.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(get.getModifiers()) || get.getParameterCount() != 1
                || get.getParameterTypes()[0] != int.class
                || (get.getReturnType() != int.class && get.getReturnType() != long.class)) {
                continue;
            }
            final Method set = TcpControlBlocks.class.getDeclaredMethod(get.getName(), int.class, get.getReturnType());
            found.add(new Accessor(get.getName(), get, set));
        }
        return found;
    }

    @Test
    void everyFieldHasItsOwnBytes() throws Exception {
        final List<Accessor> fields = accessors();
        assertTrue(fields.size() > 80, "found " + fields.size() + " fields");
        try (TcpControlBlocks tcb = new TcpControlBlocks(3)) {
            final int c = tcb.allocate();
            for (Accessor field : fields) {
                for (Accessor other : fields) {
                    other.set.invoke(tcb, c, zero(other));
                }
                field.set.invoke(tcb, c, ones(field));
                // Neighbouring rows stay untouched too.
                for (Accessor other : fields) {
                    final Object value = other.get.invoke(tcb, c);
                    assertEquals(other == field ? ones(other) : zero(other), value,
                        "writing " + field.name + " changed " + other.name);
                }
            }
        }
    }

    @Test
    void offsetsAreAlignedAndInsideTheRow() throws IllegalAccessException {
        int count = 0;
        for (Field field : TcpControlBlocks.class.getDeclaredFields()) {
            if (!field.getName().endsWith("_OFFSET") || field.getType() != int.class) {
                continue;
            }
            field.setAccessible(true);
            final int offset = field.getInt(null);
            assertTrue(offset >= 0 && offset + 4 <= TcpControlBlocks.ROW_BYTES, field.getName() + " inside the row");
            assertEquals(0, offset % 4, field.getName() + " aligned");
            count++;
        }
        assertTrue(count > 80);
    }

    private static Object ones(Accessor field) {
        return field.get.getReturnType() == long.class ? (Object) (-1L) : (Object) (-1);
    }

    private static Object zero(Accessor field) {
        return field.get.getReturnType() == long.class ? (Object) 0L : (Object) 0;
    }
}
