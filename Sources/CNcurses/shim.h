#ifndef CLAWRELAY_NCURSES_SHIM_H
#define CLAWRELAY_NCURSES_SHIM_H
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <locale.h>
#include <ncursesw/curses.h>

/* Macros and variadics Swift cannot call. */
static inline int relay_curses_lines(void) { return LINES; }
static inline int relay_curses_cols(void) { return COLS; }
static inline int relay_curses_key_resize(void) { return KEY_RESIZE; }
static inline int relay_curses_err(void) { return ERR; }
static inline attr_t relay_curses_pair(short pair) { return (attr_t)COLOR_PAIR(pair); }
static inline attr_t relay_curses_bold(void) { return A_BOLD; }
static inline attr_t relay_curses_reverse(void) { return A_REVERSE; }
static inline attr_t relay_curses_dim(void) { return A_DIM; }
static inline int relay_curses_move_add(int y, int x, const char *utf8) { return mvaddstr(y, x, utf8); }
static inline int relay_curses_attr_on(attr_t attrs) { return attron(attrs); }
static inline int relay_curses_attr_off(attr_t attrs) { return attroff(attrs); }
static inline int relay_curses_clear_to_eol(void) { return clrtoeol(); }
static inline int relay_curses_move(int y, int x) { return move(y, x); }
static inline int relay_curses_keypad_off(void) { return keypad(stdscr, FALSE); }
#endif
