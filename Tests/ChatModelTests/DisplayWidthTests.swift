import ChatModel
import Testing

@Suite struct DisplayWidthTests {
    @Test func asciiIsOneColumnEach() {
        #expect(DisplayWidth.of("hello, world!") == 13)
        #expect(DisplayWidth.of("") == 0)
    }

    @Test func cjkAndFullwidthAreTwoHalfwidthIsOne() {
        #expect(DisplayWidth.of("世界") == 4)
        #expect(DisplayWidth.of("こんにちは") == 10)
        #expect(DisplayWidth.of("한국어") == 6)
        #expect(DisplayWidth.of("Ａ") == 2, "FULLWIDTH LATIN CAPITAL LETTER A")
        #expect(DisplayWidth.of("ｱ") == 1, "HALFWIDTH KATAKANA LETTER A")
        #expect(DisplayWidth.of("\u{1100}\u{1161}\u{11A8}") == 2, "a Hangul syllable from conjoining jamo is one 2-column grapheme")
        #expect(DisplayWidth.of("\u{20000}") == 2, "plane 2 ideographs are wide")
    }

    @Test func emojiAreTwoColumnsWhateverTheySequence() {
        #expect(DisplayWidth.of("😀") == 2)
        #expect(DisplayWidth.of("👍🏽") == 2, "skin tone modifier")
        #expect(DisplayWidth.of("👨‍👩‍👧‍👦") == 2, "ZWJ family")
        #expect(DisplayWidth.of("🏳️‍🌈") == 2, "ZWJ flag built on a text-default base")
        #expect(DisplayWidth.of("🇫🇷") == 2, "regional indicator pair")
        #expect(DisplayWidth.of("🇫🇷🇩🇪") == 4)
        #expect(DisplayWidth.of("❤️") == 2, "VS16 makes a text-default symbol an emoji")
        #expect(DisplayWidth.of("❤") == 1)
        #expect(DisplayWidth.of("1️⃣") == 2, "keycap")
        #expect(DisplayWidth.of("\u{1FAE9}") == 2, "a Unicode 16 emoji, wide by the standard library's Emoji_Presentation")
        #expect(DisplayWidth.of("a😀b") == 4)
    }

    @Test func combiningMarksAndFormatCharactersTakeNoColumn() {
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("Cafe\u{301}") == 4)
        #expect(DisplayWidth.of("a\u{20DD}") == 1, "enclosing mark")
        #expect(DisplayWidth.of("\u{301}" as Unicode.Scalar) == 0)
        #expect(DisplayWidth.of("\u{200D}" as Unicode.Scalar) == 0, "ZERO WIDTH JOINER")
        #expect(DisplayWidth.of("a\u{200B}b") == 2, "ZERO WIDTH SPACE")
        #expect(DisplayWidth.of("ก\u{E34}\u{E48}") == 1, "Thai with vowel and tone marks")
    }

    @Test func controlsAreShownAsReplacementCharacters() {
        #expect(DisplayWidth.of("\u{7}") == 1)
        #expect(DisplayWidth.of("a\u{1B}b") == 3)
        #expect(DisplayWidth.sanitized("a\tb\u{1B}[31mc\r\nd\re\u{85}") == "a    b\u{FFFD}[31mc\nd\ne\u{FFFD}")
        #expect(DisplayWidth.sanitized("line\u{2028}next") == "line\u{FFFD}next")
        #expect(DisplayWidth.singleLine("two\nlines\t") == "two lines    ")
        #expect(DisplayWidth.visible("\t") == " " && DisplayWidth.visible("\u{7}") == "\u{FFFD}" && DisplayWidth.visible("é") == "é")
    }

    @Test func theTableIsFromUnicode15AndSortedWithoutOverlaps() {
        #expect(DisplayWidth.eastAsianWidthVersion == "15.0.0")
        for scalar in ["世", "ｱ", "a", "😀", "\u{3000}"] as [Unicode.Scalar] {
            #expect((0...2).contains(DisplayWidth.of(scalar)))
        }
        #expect(DisplayWidth.of("\u{3000}" as Unicode.Scalar) == 2, "IDEOGRAPHIC SPACE is fullwidth")
        #expect(DisplayWidth.of("\u{FFFD}" as Unicode.Scalar) == 1)
    }
}
