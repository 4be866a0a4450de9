"""Services of the built-in corpus (written to `test/schema.json`).

Each service has a description, its slots (description; categorical slots also list their
possible values) and its intents. An intent is a tuple
`(description, is_transactional, required_slots, optional_slots, result_slots)`, where
`optional_slots` maps a slot to its default value.
"""

from __future__ import annotations

from typing import Any


def slot(desc: str, values: list[str] | None = None) -> dict[str, Any]:
    """Slot spec; passing `values` makes the slot categorical."""
    return {
        "description": desc,
        "is_categorical": values is not None,
        "possible_values": values or [],
    }


BOOL = ["True", "False"]

SERVICES: dict[str, dict[str, Any]] = {
    "Restaurants_1": {
        "description": "Find restaurants and reserve tables",
        "slots": {
            "city": slot("City where the restaurant is located"),
            "cuisine": slot("Type of food the restaurant serves"),
            "price_range": slot("Price range of the restaurant", ["cheap", "moderate", "pricey"]),
            "outdoor_seating": slot("Whether the restaurant has outdoor seating", BOOL),
            "restaurant_name": slot("Name of the restaurant"),
            "date": slot("Date of the reservation"),
            "time": slot("Time of the reservation"),
            "party_size": slot("Number of people in the party"),
        },
        "intents": {
            "FindRestaurants": (
                "Search for restaurants",
                False,
                ["city", "cuisine"],
                {"price_range": "dontcare", "outdoor_seating": "dontcare"},
                ["restaurant_name", "city", "cuisine", "price_range"],
            ),
            "ReserveRestaurant": (
                "Reserve a table at a restaurant",
                True,
                ["restaurant_name", "city", "date", "time"],
                {"party_size": "2"},
                ["restaurant_name", "city", "date", "time", "party_size"],
            ),
        },
    },
    "Hotels_1": {
        "description": "Search hotels and book rooms",
        "slots": {
            "city": slot("City where the hotel is located"),
            "star_rating": slot("Minimum star rating of the hotel", ["1", "2", "3", "4", "5"]),
            "has_wifi": slot("Whether the hotel offers free wifi", BOOL),
            "pets_allowed": slot("Whether pets are welcome at the hotel", BOOL),
            "hotel_name": slot("Name of the hotel"),
            "check_in_date": slot("Date of check-in"),
            "check_out_date": slot("Date of check-out"),
            "number_of_rooms": slot("Number of rooms to book"),
        },
        "intents": {
            "SearchHotel": (
                "Find a hotel in a city",
                False,
                ["city"],
                {"star_rating": "dontcare", "has_wifi": "dontcare", "pets_allowed": "dontcare"},
                ["hotel_name", "city", "star_rating"],
            ),
            "ReserveHotel": (
                "Book rooms at a hotel",
                True,
                ["hotel_name", "check_in_date", "check_out_date"],
                {"number_of_rooms": "1"},
                ["hotel_name", "city", "check_in_date", "check_out_date", "number_of_rooms"],
            ),
        },
    },
    "Flights_1": {
        "description": "Search and book flights",
        "slots": {
            "origin_city": slot("City the flight departs from"),
            "destination_city": slot("City the flight arrives in"),
            "departure_date": slot("Date of the outbound flight"),
            "return_date": slot("Date of the return flight"),
            "seating_class": slot("Cabin class", ["Economy", "Premium Economy", "Business"]),
            "airline": slot("Airline operating the flight"),
            "passengers": slot("Number of passengers"),
        },
        "intents": {
            "SearchFlight": (
                "Search one way or round trip flights",
                False,
                ["origin_city", "destination_city", "departure_date"],
                {"return_date": "dontcare", "seating_class": "Economy", "airline": "dontcare"},
                ["airline", "origin_city", "destination_city", "departure_date", "return_date"],
            ),
            "BookFlight": (
                "Book seats on a flight",
                True,
                ["origin_city", "destination_city", "departure_date", "airline"],
                {"passengers": "1", "seating_class": "Economy", "return_date": "dontcare"},
                [
                    "airline",
                    "origin_city",
                    "destination_city",
                    "departure_date",
                    "return_date",
                    "seating_class",
                    "passengers",
                ],
            ),
        },
    },
    "Events_1": {
        "description": "Find concerts, games and shows and buy tickets",
        "slots": {
            "category": slot("Kind of event", ["Music", "Sports", "Theater", "Comedy"]),
            "city": slot("City where the event takes place"),
            "date": slot("Date of the event"),
            "event_name": slot("Name of the event, artist or match"),
            "number_of_tickets": slot("Number of tickets to buy"),
        },
        "intents": {
            "FindEvents": (
                "Find events in a city",
                False,
                ["category", "city"],
                {"date": "dontcare"},
                ["event_name", "category", "city", "date"],
            ),
            "BuyEventTickets": (
                "Buy tickets for an event",
                True,
                ["event_name", "number_of_tickets", "date", "city"],
                {},
                ["event_name", "city", "date", "number_of_tickets"],
            ),
        },
    },
    "Calendar_1": {
        "description": "View and add events on the user's calendar",
        "slots": {
            "event_date": slot("Date of the calendar event"),
            "event_time": slot("Start time of the calendar event"),
            "event_name": slot("Title of the calendar event"),
            "event_location": slot("Where the calendar event takes place"),
        },
        "intents": {
            "GetEvents": (
                "List the events on a date",
                False,
                ["event_date"],
                {},
                ["event_date", "event_time", "event_name"],
            ),
            "AddEvent": (
                "Add an event to the calendar",
                True,
                ["event_date", "event_time", "event_name"],
                {"event_location": "dontcare"},
                ["event_date", "event_time", "event_name", "event_location"],
            ),
        },
    },
    "RideSharing_1": {
        "description": "Book a taxi or shared ride",
        "slots": {
            "pickup_location": slot("Where the driver picks the riders up"),
            "destination": slot("Where the ride goes"),
            "number_of_riders": slot("Number of riders"),
            "ride_type": slot("Type of ride", ["Pool", "Regular", "Luxury"]),
        },
        "intents": {
            "GetRide": (
                "Book a ride to a destination",
                True,
                ["destination", "number_of_riders"],
                {"pickup_location": "current location", "ride_type": "Regular"},
                ["destination", "number_of_riders", "ride_type", "pickup_location"],
            ),
        },
    },
    "Movies_1": {
        "description": "Find movies in theaters and buy tickets",
        "slots": {
            "city": slot("City where the theater is"),
            "genre": slot("Genre of the movie"),
            "movie_name": slot("Title of the movie"),
            "theater_name": slot("Name of the movie theater"),
            "show_date": slot("Date of the show"),
            "show_time": slot("Start time of the show"),
            "show_type": slot("Format of the show", ["regular", "3d", "IMAX"]),
            "number_of_tickets": slot("Number of tickets to buy"),
        },
        "intents": {
            "FindMovies": (
                "Find movies playing in a city",
                False,
                ["city"],
                {"genre": "dontcare", "show_date": "dontcare"},
                ["movie_name", "theater_name", "genre", "city"],
            ),
            "BuyMovieTickets": (
                "Buy tickets for a show",
                True,
                ["movie_name", "number_of_tickets", "show_date", "show_time"],
                {"theater_name": "dontcare", "show_type": "regular", "city": "dontcare"},
                [
                    "movie_name",
                    "theater_name",
                    "show_date",
                    "show_time",
                    "show_type",
                    "number_of_tickets",
                ],
            ),
        },
    },
    "RentalCars_1": {
        "description": "Find and reserve rental cars",
        "slots": {
            "pickup_city": slot("City where the car is picked up"),
            "pickup_date": slot("Date of pickup"),
            "pickup_time": slot("Time of pickup"),
            "dropoff_date": slot("Date the car is returned"),
            "car_type": slot("Size of the car", ["Compact", "Standard", "SUV"]),
        },
        "intents": {
            "GetCars": (
                "Find available rental cars",
                False,
                ["pickup_city", "pickup_date", "dropoff_date"],
                {"car_type": "dontcare"},
                ["pickup_city", "pickup_date", "dropoff_date", "car_type"],
            ),
            "ReserveCar": (
                "Reserve a rental car",
                True,
                ["pickup_city", "pickup_date", "pickup_time", "dropoff_date", "car_type"],
                {},
                ["pickup_city", "pickup_date", "pickup_time", "dropoff_date", "car_type"],
            ),
        },
    },
}


def schema_json() -> list[dict[str, Any]]:
    """The SGD `schema.json` content: one entry per service, in definition order."""
    out = []
    for name, svc in SERVICES.items():
        out.append(
            {
                "service_name": name,
                "description": svc["description"],
                "slots": [{"name": s, **spec} for s, spec in svc["slots"].items()],
                "intents": [
                    {
                        "name": i,
                        "description": d,
                        "is_transactional": t,
                        "required_slots": req,
                        "optional_slots": opt,
                        "result_slots": res,
                    }
                    for i, (d, t, req, opt, res) in svc["intents"].items()
                ],
            }
        )
    return out
