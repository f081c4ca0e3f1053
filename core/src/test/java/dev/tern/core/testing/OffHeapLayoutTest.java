package dev.tern.core.testing;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The layout checker can fail: deliberately wrong layouts give the problems a later edit would introduce. */
class OffHeapLayoutTest {
    /** A 16-byte record with a long that runs into the next int, and a misaligned int. */
    @SuppressWarnings("unused")
    static final class Broken {
        static final int SEQ_OFFSET = 0;
        static final int SENT_NS_OFFSET = 4;
        static final int WINDOW_OFFSET = 10;
        static final int LABEL_OFFSET = 12;
        static final int LABEL_LENGTH = 6;
    }

    private static final String BROKEN_SOURCE = """
        memory.set(INT, at(i) + SEQ_OFFSET, seq);
        memory.set(LONG, at(i) + SENT_NS_OFFSET, nowNs);
        memory.get(ValueLayout.JAVA_INT_UNALIGNED, base(c, 2) + WINDOW_OFFSET);
        """;

    @SuppressWarnings("unused")
    static final class Sound {
        static final int SEQ_OFFSET = 0;
        static final int FLAGS_OFFSET = 4;
        static final int SENT_NS_OFFSET = 8;
        static final int MAGIC_OFFSET = 16;
        static final int NOT_A_FIELD = 3;
    }

    private static final String SOUND_SOURCE = """
        memory.set(INT, at(i) + SEQ_OFFSET, seq);
        memory.set(JAVA_SHORT, at(i) + FLAGS_OFFSET, (short) flags);
        return memory.get(LONG, at(i) + SENT_NS_OFFSET);
        JAVA_INT.varHandle().setRelease(memory, (long) MAGIC_OFFSET, MAGIC);
        """;

    @Test
    void reportsOverlapMisalignmentAndFieldsOutsideTheRecord() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(Broken.class, BROKEN_SOURCE, name -> true);
        assertEquals(List.of(new OffHeapLayout.Slot("SEQ_OFFSET", 0, 4), new OffHeapLayout.Slot("SENT_NS_OFFSET", 4, 8),
            new OffHeapLayout.Slot("WINDOW_OFFSET", 10, 4), new OffHeapLayout.Slot("LABEL_OFFSET", 12, 6)), fields);
        final List<String> problems = OffHeapLayout.problems(fields, 16);
        assertTrue(problems.contains("SENT_NS_OFFSET at 4 is not aligned to its 8 bytes"), problems::toString);
        assertTrue(problems.contains("SENT_NS_OFFSET overlaps WINDOW_OFFSET"), problems::toString);
        assertTrue(problems.contains("WINDOW_OFFSET at 10 is not aligned to its 4 bytes"), problems::toString);
        assertTrue(problems.contains("WINDOW_OFFSET overlaps LABEL_OFFSET"), problems::toString);
        assertTrue(problems.contains("LABEL_OFFSET [12, 18) is outside the 16-byte record"), problems::toString);
        assertTrue(OffHeapLayout.problems(fields.subList(0, 1), 6).contains(
            "the record size 6 is not a multiple of 4, so the next record's fields would be misaligned"));
    }

    @Test
    void acceptsASoundLayout() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(Sound.class, SOUND_SOURCE, name -> true);
        assertEquals(4, fields.size());
        assertEquals(List.of(), OffHeapLayout.problems(fields, 24));
    }

    @Test
    void aFieldWithoutAnAccessOrWithTwoWidthsIsAnError() {
        final AssertionError unknown = assertThrows(AssertionError.class,
            () -> OffHeapLayout.fields(Sound.class, "memory.set(INT, SEQ_OFFSET, 1);", name -> true));
        assertTrue(unknown.getMessage().contains("FLAGS_OFFSET is never accessed"), unknown.getMessage());
        final AssertionError twice = assertThrows(AssertionError.class, () -> OffHeapLayout.fields(Sound.class,
            SOUND_SOURCE + "memory.get(JAVA_LONG, at(i) + SEQ_OFFSET);", name -> true));
        assertTrue(twice.getMessage().contains("SEQ_OFFSET is accessed as 4 and as 8 bytes"), twice.getMessage());
    }
}
