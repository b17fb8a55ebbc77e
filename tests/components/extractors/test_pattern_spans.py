"""Dates and codes found by their shape."""

from agrag.components.extractors.pattern_spans import code_spans, date_spans


def dates(sentence: str) -> list[str]:
    return [sentence[a:b] for a, b in date_spans(sentence)]


def codes(sentence: str) -> list[str]:
    return [sentence[a:b] for a, b in code_spans(sentence)]


def test_a_date_keeps_its_weekday_day_range_and_year() -> None:
    assert dates("Failure: Saturday 17 August 2024 (found Monday 19 August).") == [
        "Saturday 17 August 2024",
        "Monday 19 August",
    ]
    assert dates("Lost on 21-22 January 2025, back by October 31, 2024.") == ["21-22 January 2025", "October 31, 2024"]
    assert dates("From 1 April 2023 to September 2026.") == ["1 April 2023", "September 2026"]
    assert dates("- 4 August to 12 September 2025: lab closed") == ["4 August", "12 September 2025"]
    assert dates("Meet on 3 May at 10:00, or May 4 at 10:30.") == ["3 May", "May 4"]


def test_a_month_alone_counts_but_not_opening_a_sentence_nor_as_a_verb() -> None:
    assert dates("The target is May.") == ["May"]
    assert dates("May 2025 was busy.") == ["May 2025"]
    assert dates("March is busy.") == []
    assert dates("In May we sailed.") == ["May"]
    assert dates("Then it May be late.") == []


def test_words_that_start_like_months_and_abbreviations_alone_are_no_dates() -> None:
    assert dates("Maria met Marcus and the Decker team; Oct alone.") == []
    assert dates("Maria met them on Oct 3 and in Dec 2024.") == ["Oct 3", "Dec 2024"]


def test_holidays_and_numeric_dates_count_but_years_times_and_weekdays_do_not() -> None:
    assert dates("Drafts by Christmas, on 2024-10-31 and 31/10/2024.") == ["Christmas", "2024-10-31", "31/10/2024"]
    assert dates("In 2024 at 17:30 on Thursday.") == []


def test_codes_have_letters_and_digits() -> None:
    sentence = "The CT-60 (not the CT-6), GB-3R, NMRC/2022/118, FC4-0388, v2 and three CT-6s; room G.14."
    assert codes(sentence) == ["CT-60", "CT-6", "GB-3R", "NMRC/2022/118", "FC4-0388", "v2", "CT-6", "G.14"]


def test_amounts_and_plain_numbers_are_no_codes_unless_a_word_says_so() -> None:
    assert codes("It weighs 20m at 96kHz, 512GB, the 1st of 5.3 and 2024-10-31.") == []
    assert codes("Serial 60-0417, supplier no. 40219.") == ["60-0417", "40219"]
