/// The CSI (`ESC [`) and SS3 (`ESC O`) sequences xterm, VTE, rxvt, tmux and kitty send for keys.
extension KeyDecoder {
    enum SequenceMeaning {
        case key(Key)
        case pasteStart
    }

    /// `ESC O x`: arrows, Home/End and F1–F4 in application mode, keypad Enter, rxvt Ctrl-arrows.
    static func singleShiftKey(_ final: UInt8) -> Key? {
        switch final {
        case 0x41...0x44, 0x48, 0x46: return cursorKey(final).map { Key($0) }
        case 0x50...0x53: return Key(.function(Int(final - 0x50) + 1))
        case 0x4D: return .enter
        case 0x61...0x64: return cursorKey(final - 0x20).map { Key($0, .control) }
        default: return nil
        }
    }

    /// `ESC [ parameters final`; `nil` for sequences that are not keys (mouse reports, focus, …).
    static func controlSequenceKey(parameters: [UInt8], final: UInt8) -> SequenceMeaning? {
        if let first = parameters.first, (0x3C...0x3F).contains(first) { return nil }
        let numbers = String(decoding: parameters, as: UTF8.self).split(separator: ";", omittingEmptySubsequences: false).map {
            Int($0.split(separator: ":").first ?? "")
        }
        let modifierParameter = numbers.count > 1 ? numbers[1] ?? 1 : 1
        let modifiers = Self.modifiers(modifierParameter)
        switch final {
        case 0x41...0x44, 0x48, 0x46:
            return cursorKey(final).map { .key(Key($0, modifiers)) }
        case 0x50...0x53:
            return .key(Key(.function(Int(final - 0x50) + 1), modifiers))
        case 0x5A:
            return .key(Key(.tab, modifiers.union(.shift)))
        case 0x61...0x64:
            return cursorKey(final - 0x20).map { .key(Key($0, .shift)) }
        case 0x75:
            return numbers.first.flatMap { $0 }.flatMap { codepointKey($0, modifiers) }.map { .key($0) }
        case 0x7E, 0x5E, 0x24, 0x40:
            guard let number = numbers.first ?? nil else { return nil }
            if number == 200, final == 0x7E { return .pasteStart }
            if number == 27, numbers.count > 2, let codepoint = numbers[2] { return codepointKey(codepoint, modifiers).map { .key($0) } }
            guard let code = tildeKey(number) else { return nil }
            switch final {
            case 0x5E: return .key(Key(code, .control))
            case 0x24: return .key(Key(code, .shift))
            case 0x40: return .key(Key(code, [.control, .shift]))
            default: return .key(Key(code, modifiers))
            }
        default:
            return nil
        }
    }

    /// xterm's modifier parameter: 1 + (Shift 1, Alt 2, Ctrl 4, Meta 8).
    static func modifiers(_ parameter: Int) -> Key.Modifiers {
        let bits = max(0, parameter - 1)
        var modifiers: Key.Modifiers = []
        if bits & 1 != 0 { modifiers.insert(.shift) }
        if bits & 2 != 0 || bits & 8 != 0 { modifiers.insert(.alt) }
        if bits & 4 != 0 { modifiers.insert(.control) }
        return modifiers
    }

    static func cursorKey(_ final: UInt8) -> Key.Code? {
        switch final {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return .right
        case 0x44: return .left
        case 0x48: return .home
        case 0x46: return .end
        default: return nil
        }
    }

    /// `ESC [ n ~` keys (vt220 and xterm numbering).
    static func tildeKey(_ number: Int) -> Key.Code? {
        switch number {
        case 1, 7: return .home
        case 4, 8: return .end
        case 2: return .insert
        case 3: return .delete
        case 5: return .pageUp
        case 6: return .pageDown
        case 11...15: return .function(number - 10)
        case 17...21: return .function(number - 11)
        case 23, 24: return .function(number - 12)
        default: return nil
        }
    }

    /// A key given as a Unicode code point (kitty's `CSI u`, xterm's modifyOtherKeys `CSI 27;m;c~`).
    static func codepointKey(_ codepoint: Int, _ modifiers: Key.Modifiers) -> Key? {
        switch codepoint {
        case 13: return Key(.enter, modifiers)
        case 9: return Key(.tab, modifiers)
        case 27: return Key(.escape, modifiers)
        case 8, 127: return Key(.backspace, modifiers)
        default:
            guard codepoint >= 0x20, let scalar = Unicode.Scalar(UInt32(codepoint)), !DisplayWidth.isControl(scalar) else { return nil }
            let character = Character(scalar)
            let upper = character.uppercased()
            let lower = character.lowercased()
            if modifiers == .shift, upper.count == 1 { return Key(.character(Character(upper))) }
            if modifiers.contains(.control), lower.count == 1 { return Key(.character(Character(lower)), modifiers) }
            return Key(.character(character), modifiers)
        }
    }
}
