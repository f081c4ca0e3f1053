package dev.tern.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a hand-numbered off-heap record layout (the TCP control-block row, a sent-segment entry, ...) against itself,
 * so that an overlap or a misaligned field introduced later fails a test, without the test repeating any number.
 *
 * <p>Convention: each field of a record is a {@code static final int} constant named {@code SOMETHING_OFFSET} in the
 * class that owns the table. Offsets are read from those constants by reflection. A field's width is read from how
 * the class's own source accesses it: the {@code ValueLayout} ({@code INT}, {@code JAVA_LONG}, {@code SHORT}, ...)
 * passed together with an offset expression naming the constant, as in {@code rows.get(LONG, base(c) + CWND_OFFSET)}
 * (or {@code JAVA_INT.varHandle().setRelease(memory, (long) MAGIC_OFFSET, ...)}).
 * A field accessed with two widths, or never accessed, is a problem too: its width would be a guess. A byte array
 * field names its length in a constant {@code SOMETHING_LENGTH} beside {@code SOMETHING_OFFSET}.
 */
public final class OffHeapLayout {
    /** One field: its constant's name, offset and width in bytes. */
    public record Slot(String name, int offset, int width) {
    }

    private static final Pattern LAYOUT = Pattern.compile(
        "\\b(?:JAVA_)?(BYTE|SHORT|CHAR|INT|FLOAT|LONG|DOUBLE)(?:_UNALIGNED)?(?:\\s*,|\\.varHandle\\(\\)\\.\\w+\\([^,;]*,)");
    private static final Map<String, Integer> WIDTHS = Map.of("BYTE", 1, "SHORT", 2, "CHAR", 2, "INT", 4, "FLOAT", 4,
        "LONG", 8, "DOUBLE", 8);

    private OffHeapLayout() {
    }

    /** The fields of {@code table} whose constant names {@code names} accepts, widths from its source under src/main/java. */
    public static List<Slot> fields(Class<?> table, Predicate<String> names) {
        final Path source = Path.of("src", "main", "java", table.getName().replace('.', '/') + ".java");
        try {
            return fields(table, Files.readString(source), names);
        } catch (IOException e) {
            throw new UncheckedIOException("the layout test reads " + source + " (run it from its module's directory)", e);
        }
    }

    /** As {@link #fields(Class, Predicate)} with the source given (tests of this checker use a fixture's). */
    public static List<Slot> fields(Class<?> table, String source, Predicate<String> names) {
        final Map<String, Integer> offsets = constants(table, name -> name.endsWith("_OFFSET") && names.test(name));
        final Map<String, Integer> lengths = constants(table, name -> name.endsWith("_LENGTH"));
        final Map<String, Integer> widths = new LinkedHashMap<>();
        final List<String> conflicts = new ArrayList<>();
        final Matcher layout = LAYOUT.matcher(source);
        while (layout.find()) {
            final int width = WIDTHS.get(layout.group(1));
            for (String name : identifiers(offsetExpression(source, layout.end()))) {
                if (offsets.containsKey(name)) {
                    final Integer before = widths.put(name, width);
                    if (before != null && before != width) {
                        conflicts.add(name + " is accessed as " + before + " and as " + width + " bytes");
                    }
                }
            }
        }
        final List<Slot> fields = new ArrayList<>();
        for (Map.Entry<String, Integer> offset : offsets.entrySet()) {
            final String name = offset.getKey();
            final Integer array = lengths.get(name.substring(0, name.length() - "_OFFSET".length()) + "_LENGTH");
            final Integer width = array != null ? array : widths.get(name);
            if (width == null) {
                conflicts.add(name + " is never accessed through a ValueLayout, so its width is unknown");
                continue;
            }
            fields.add(new Slot(name, offset.getValue(), width));
        }
        if (!conflicts.isEmpty()) {
            throw new AssertionError(table.getSimpleName() + ": " + String.join("; ", conflicts));
        }
        fields.sort(Comparator.comparingInt(Slot::offset));
        return fields;
    }

    /**
     * What is wrong with a record of {@code recordBytes} holding {@code fields}: a field outside the record, two that
     * overlap, a field not aligned to its width (byte arrays excepted), a record size that breaks the alignment of the
     * next record in an array. Empty when the layout is sound.
     */
    public static List<String> problems(List<Slot> fields, int recordBytes) {
        final List<String> problems = new ArrayList<>();
        final List<Slot> sorted = fields.stream().sorted(Comparator.comparingInt(Slot::offset)).toList();
        int maxAlignment = 1;
        for (int i = 0; i < sorted.size(); i++) {
            final Slot f = sorted.get(i);
            if (f.offset() < 0 || f.offset() + f.width() > recordBytes) {
                problems.add(f.name() + " [" + f.offset() + ", " + (f.offset() + f.width()) + ") is outside the "
                    + recordBytes + "-byte record");
            }
            if (i > 0 && sorted.get(i - 1).offset() + sorted.get(i - 1).width() > f.offset()) {
                problems.add(sorted.get(i - 1).name() + " overlaps " + f.name());
            }
            final int alignment = WIDTHS.containsValue(f.width()) ? f.width() : 1;
            if (f.offset() % alignment != 0) {
                problems.add(f.name() + " at " + f.offset() + " is not aligned to its " + f.width() + " bytes");
            }
            maxAlignment = Math.max(maxAlignment, alignment);
        }
        if (recordBytes % maxAlignment != 0) {
            problems.add("the record size " + recordBytes + " is not a multiple of " + maxAlignment
                + ", so the next record's fields would be misaligned");
        }
        return problems;
    }

    private static Map<String, Integer> constants(Class<?> table, Predicate<String> names) {
        final Map<String, Integer> found = new LinkedHashMap<>();
        for (Field field : table.getDeclaredFields()) {
            final int modifiers = field.getModifiers();
            if (Modifier.isStatic(modifiers) && Modifier.isFinal(modifiers) && field.getType() == int.class
                && names.test(field.getName())) {
                try {
                    field.setAccessible(true);
                    found.put(field.getName(), field.getInt(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return found;
    }

    /** The argument that starts at {@code from}: up to the next comma or closing parenthesis at the same depth. */
    private static String offsetExpression(String source, int from) {
        int depth = 0;
        for (int i = from; i < source.length(); i++) {
            final char c = source.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && depth-- == 0 || c == ',' && depth == 0 || c == ';') {
                return source.substring(from, i);
            }
        }
        return source.substring(from);
    }

    private static List<String> identifiers(String expression) {
        final List<String> names = new ArrayList<>();
        final Matcher m = Pattern.compile("\\b[A-Z][A-Z0-9_]*\\b").matcher(expression);
        while (m.find()) {
            names.add(m.group());
        }
        return names;
    }
}
