package dev.tern.conformance.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The repository's README.md as lines, with the fenced code blocks of one of its sections: what {@link ReadmeTest}
 * and {@link ReadmeQuickStartTest} read, so that both break when the README drifts from what they hold it to.
 */
record Readme(List<String> lines) {
    /** A fenced block: its info string ({@code java}, {@code xml}, {@code sh}, or empty) and its lines. */
    record Block(String language, String text) {
    }

    static Path root() {
        final String configured = System.getProperty("tern.root");
        return configured != null ? Path.of(configured) : Path.of("..");
    }

    static Readme read() throws IOException {
        return of(Files.readAllLines(root().resolve("README.md")));
    }

    static Readme of(List<String> lines) {
        return new Readme(List.copyOf(lines));
    }

    /** Whether each line is inside a fenced code block (the fences themselves count as inside). */
    boolean[] inCode() {
        final boolean[] code = new boolean[lines.size()];
        boolean open = false;
        for (int i = 0; i < lines.size(); i++) {
            final boolean fence = lines.get(i).stripLeading().startsWith("```");
            code[i] = open || fence;
            if (fence) {
                open = !open;
            }
        }
        return code;
    }

    /** The fenced blocks between the heading {@code heading} (a whole line) and the next heading of its level or above. */
    List<Block> blocks(String heading) {
        final int start = lines.indexOf(heading);
        if (start < 0) {
            throw new AssertionError("README.md has no line '" + heading + "'");
        }
        final int level = heading.indexOf(' ');
        final List<Block> blocks = new ArrayList<>();
        String language = null;
        StringBuilder text = null;
        for (int i = start + 1; i < lines.size(); i++) {
            final String line = lines.get(i);
            if (line.startsWith("```")) {
                if (text == null) {
                    language = line.substring(3).strip();
                    text = new StringBuilder();
                } else {
                    blocks.add(new Block(language, text.toString()));
                    text = null;
                }
            } else if (text != null) {
                text.append(line).append('\n');
            } else if (line.startsWith("#") && line.indexOf(' ') > 0 && line.indexOf(' ') <= level
                && line.substring(0, line.indexOf(' ')).chars().allMatch(c -> c == '#')) {
                break;
            }
        }
        return blocks;
    }

    /** The one block of {@code language} in the section {@code heading}; fails when there is none or several. */
    String block(String heading, String language) {
        final List<Block> found = blocks(heading).stream().filter(b -> b.language().equals(language)).toList();
        if (found.size() != 1) {
            throw new AssertionError("README.md's section '" + heading + "' has " + found.size() + " ```" + language
                + " blocks; the quick-start test reads exactly one");
        }
        return found.getFirst().text();
    }
}
