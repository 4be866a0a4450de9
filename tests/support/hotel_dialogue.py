"""The hotel dialogue several method tests share (selectors, the method matrix, the tokenizer of
the tiny LLMLingua-2 model)."""

HOTEL_TEXTS = [
    "Hi, I need a hotel in Cambridge for three nights.",
    "Sure. Do you have a price range in mind?",
    "Something moderate, with free parking please.",
    "The Acorn Guest House is moderate and has free parking. Shall I book it?",
    "Yes, book it for two people starting Friday.",
    "Done. Your reference number is 8XK2QP.",
    "Actually, can you change that to four nights?",
    "No problem, it is now four nights from Friday.",
    "Great. I also need a taxi to the hotel from the station.",
    "What time would you like to leave?",
    "Around 5 pm, please.",
    "Booked: a red Toyota will pick you up at 5 pm.",
]
