"""The writing guide's rules: a card needs a specific title, labels and testable criteria."""


def accept(card: dict) -> bool:
    title = card.get("title", "")
    return (
        len(title.split()) >= 4
        and bool(card.get("labels"))
        and len(card.get("acceptance_criteria", [])) >= 1
    )
