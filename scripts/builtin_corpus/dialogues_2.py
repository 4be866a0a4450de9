"""Dialogues of `test/dialogues_002.json` (ids `2_00000`, `2_00001`, ...), in order.

Each `D(...)` is one dialogue; its index in `DIALOGUES` is its id suffix, so append new
dialogues at the end to keep the existing ids stable.
"""

from dsl import D, s, u

DIALOGUES: list[D] = [
    D(
        "Flights_1",
        "SearchFlight",
        note="date changed and changed back",
        turns=[
            u(
                "Find me a one way flight from Seattle to Phoenix on June 8th.",
                origin_city="Seattle",
                destination_city="Phoenix",
                departure_date="June 8th",
            ),
            s("Alaska Airlines has a nonstop flight at 9:30 am on June 8th for $156."),
            u("What about June 9th? It might be cheaper.", departure_date="June 9th"),
            s("On June 9th, Alaska Airlines has the same flight for $171."),
            u("That's more expensive. Let's stay with June 8th then.", departure_date="June 8th"),
            s("Okay. Would you like to book the 9:30 am Alaska Airlines flight on June 8th?"),
            u(
                "Yes, in Economy, for 1 passenger.",
                _intent="BookFlight",
                airline="Alaska Airlines",
                seating_class="Economy",
                passengers="1",
            ),
            s(
                "Please confirm: 1 Economy ticket on Alaska Airlines from Seattle to Phoenix on "
                "June 8th."
            ),
            u("Confirmed."),
            s("Your flight is booked."),
        ],
    ),
    D(
        "RideSharing_1",
        "GetRide",
        note="rider count correction; ride type follows",
        turns=[
            u(
                "I need a Pool ride to the Civic Center for 1 person.",
                ride_type="Pool",
                destination="Civic Center",
                number_of_riders="1",
            ),
            s("Where should the driver pick you up?", req=["pickup_location"]),
            u("From 220 Oak Street.", pickup_location="220 Oak Street"),
            s("Please confirm: a Pool ride for 1 from 220 Oak Street to the Civic Center."),
            u("Sorry, I meant 3 people. My parents are with me.", number_of_riders="3"),
            s("A Pool ride only fits 2 riders. Shall I book a Regular ride for 3 instead?"),
            u("Yes, a Regular ride is fine.", ride_type="Regular"),
            s("Your Regular ride for 3 is booked and will arrive in 4 minutes."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        absent=("date",),
        note="date moved to a value never said literally; tickets added late",
        turns=[
            u(
                "Are there any theater shows in Chicago next weekend?",
                category="Theater",
                city="Chicago",
                date="next weekend",
            ),
            s("Midnight at the Pier is playing at the Lakeside Playhouse on April 12th."),
            u("What's it about?"),
            s("It's a comedy about two families running rival lighthouses."),
            u(
                "Sounds fun. Can I get 2 tickets?",
                _intent="BuyEventTickets",
                event_name="Midnight at the Pier",
                date="April 12th",
                number_of_tickets="2",
            ),
            s("Please confirm: 2 tickets for Midnight at the Pier on April 12th in Chicago."),
            u("Hmm, is there a performance the following evening too?"),
            s("Yes, there's also a show the following evening at 7 pm."),
            u("Then let's switch to that one, we're busy on the 12th.", date="April 13th"),
            s("Okay, 2 tickets for Midnight at the Pier the following evening at 7 pm."),
            u(
                "And one more thing, my neighbor wants to join, so 3 tickets in total.",
                number_of_tickets="3",
            ),
            s("Please confirm: 3 tickets for Midnight at the Pier in Chicago, $135 in total."),
            u("Yes, go ahead."),
            s("Your tickets have been purchased."),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="cuisine and restaurant switched late; repeated time",
        turns=[
            u(
                "I'm planning a birthday dinner. Can you find a Mexican restaurant in Sacramento?",
                cuisine="Mexican",
                city="Sacramento",
            ),
            s("Casa Verde on J Street serves Mexican food in Sacramento. It's moderately priced."),
            u("Do they have outdoor seating?", _req=["outdoor_seating"]),
            s("No, Casa Verde doesn't have outdoor seating."),
            u(
                "We really want to sit outside. Look for places with outdoor seating.",
                outdoor_seating="True",
            ),
            s("El Patio Grill in Sacramento has outdoor seating and serves Mexican food."),
            u(
                "Great. Reserve a table for 6 on Saturday at 7 pm.",
                _intent="ReserveRestaurant",
                restaurant_name="El Patio Grill",
                party_size="6",
                date="Saturday",
                time="7 pm",
            ),
            s("Please confirm: a table for 6 at El Patio Grill in Sacramento on Saturday at 7 pm."),
            u(
                "Wait, the birthday girl says she'd prefer Italian food. Can you check Italian "
                "places with outdoor seating?",
                _intent="FindRestaurants",
                cuisine="Italian",
            ),
            s("Trattoria Sole in Sacramento is Italian and has a garden patio."),
            u(
                "Book Trattoria Sole instead, same time, for 6 people.",
                _intent="ReserveRestaurant",
                restaurant_name="Trattoria Sole",
            ),
            s("Please confirm: a table for 6 at Trattoria Sole in Sacramento on Saturday at 7 pm."),
            u("Yes, and it's still 7 pm on Saturday.", time="7 pm", date="Saturday"),
            s("Correct, Saturday at 7 pm. Shall I book it?"),
            u("Yes please."),
            s(
                "Your table at Trattoria Sole is booked. Ask the staff if you'd like a candle for "
                "the cake."
            ),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="flight then hotel; late check-out and rooms revisions",
        turns=[
            u(
                "I'm going to Miami for a wedding. Can you find me a flight from Atlanta on July "
                "10th?",
                destination_city="Miami",
                origin_city="Atlanta",
                departure_date="July 10th",
            ),
            s("Delta has a nonstop flight from Atlanta to Miami at 2:10 pm on July 10th for $129."),
            u(
                "Perfect, book 1 Economy ticket, just for me.",
                _intent="BookFlight",
                airline="Delta",
                seating_class="Economy",
                passengers="1",
            ),
            s("Please confirm: 1 Economy ticket on Delta from Atlanta to Miami on July 10th."),
            u("Yes."),
            s("Your flight is booked. Do you need anything else?"),
            u(
                "I also need a hotel in Miami near the beach.",
                _svc="Hotels_1",
                _intent="SearchHotel",
                city="Miami",
            ),
            s("The Coral Sands Hotel is a 4 star hotel on Collins Avenue, right by the beach."),
            u(
                "Sounds lovely. Book 1 room from July 10th to July 13th.",
                _intent="ReserveHotel",
                hotel_name="Coral Sands Hotel",
                number_of_rooms="1",
                check_in_date="July 10th",
                check_out_date="July 13th",
            ),
            s("Please confirm: 1 room at the Coral Sands Hotel, July 10th to July 13th."),
            u("Hold on, do they allow pets? I might bring my cat.", _req=["pets_allowed"]),
            s("Sorry, the Coral Sands Hotel doesn't allow pets. The Palm Breeze Inn nearby does."),
            u(
                "Then I'll leave the cat with my brother and keep the Coral Sands Hotel. But I'll "
                "stay one more night, until July 14th.",
                check_out_date="July 14th",
            ),
            s(
                "Please confirm: 1 room at the Coral Sands Hotel, July 10th to July 14th, $230 per "
                "night."
            ),
            u("Actually, make it 2 rooms. My sister is coming too.", number_of_rooms="2"),
            s("Okay, 2 rooms at the Coral Sands Hotel from July 10th to July 14th."),
            u("Yes, that's correct."),
            s("Your rooms are booked. The flight and hotel details have been sent to your email."),
        ],
    ),
    D(
        "Movies_1",
        "FindMovies",
        note="date narrowed from a range",
        turns=[
            u(
                "What animated movies are playing in Fresno this weekend?",
                genre="animated",
                city="Fresno",
                show_date="this weekend",
            ),
            s("Paper Kites and The Little Lighthouse are playing at Tower Theater in Fresno."),
            u("Is The Little Lighthouse good for kids?"),
            s("Yes, it's rated PG and runs 92 minutes."),
            u(
                "Great, buy 3 tickets for Sunday at 2 pm.",
                _intent="BuyMovieTickets",
                movie_name="The Little Lighthouse",
                number_of_tickets="3",
                show_date="Sunday",
                show_time="2 pm",
                theater_name="Tower Theater",
            ),
            s(
                "Please confirm: 3 tickets for The Little Lighthouse at Tower Theater on Sunday at "
                "2 pm."
            ),
            u("Yes."),
            s("Your tickets are booked."),
        ],
    ),
    D(
        "RentalCars_1",
        "GetCars",
        note="car type changed twice, final change late",
        turns=[
            u(
                "I'm looking for a rental car in Las Vegas from May 2nd to May 5th.",
                pickup_city="Las Vegas",
                pickup_date="May 2nd",
                dropoff_date="May 5th",
            ),
            s("What type of car would you like: Compact, Standard or SUV?", req=["car_type"]),
            u("A Compact car is enough.", car_type="Compact"),
            s("A Compact Kia Rio is available at the Las Vegas airport for $29 a day."),
            u(
                "Actually we'll have luggage for three people, so let's look at a Standard car.",
                car_type="Standard",
            ),
            s("A Standard Toyota Camry is available for $41 a day."),
            u(
                "Okay. I'll pick it up at 3 pm on May 2nd.",
                _intent="ReserveCar",
                pickup_time="3 pm",
            ),
            s("Please confirm: Standard car in Las Vegas, May 2nd at 3 pm to May 5th."),
            u(
                "Hmm, we're planning a trip to the canyon too. Let's get an SUV after all.",
                car_type="SUV",
            ),
            s(
                "A Jeep Cherokee SUV is available for $58 a day. Please confirm: SUV from May 2nd "
                "at 3 pm to May 5th."
            ),
            u("Yes, please reserve it."),
            s("Your Jeep Cherokee is reserved. The total comes to $174."),
        ],
    ),
    D(
        "Calendar_1",
        "GetEvents",
        note="date correction, then an event is added",
        turns=[
            u("What's on my calendar for March 14th?", event_date="March 14th"),
            s("You have a yoga class at 9 am and a call with Priya at 4 pm on March 14th."),
            u("Sorry, I meant March 15th.", event_date="March 15th"),
            s("On March 15th you have nothing scheduled."),
            u(
                "Great. Add a haircut appointment then at 11 am.",
                _intent="AddEvent",
                event_name="haircut appointment",
                event_time="11 am",
            ),
            s("Where is the haircut appointment?", req=["event_location"]),
            u("At Clip Joint on Maple Avenue.", event_location="Clip Joint"),
            s("Please confirm: haircut appointment on March 15th at 11 am at Clip Joint."),
            u("Yes, please add it."),
            s("It's been added to your calendar."),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="price range revised; time and party size late",
        turns=[
            u(
                "Find me a cheap place for Chinese food in Fremont.",
                price_range="cheap",
                cuisine="Chinese",
                city="Fremont",
            ),
            s("Golden Bowl in Fremont serves cheap Chinese food and has great dumplings."),
            u(
                "Hmm, it's for a business dinner, so something a bit nicer. Moderate prices are "
                "fine.",
                price_range="moderate",
            ),
            s("Jade Palace is a moderately priced Chinese restaurant in Fremont."),
            u(
                "Good. Book a table for 4 on Thursday at 6:30 pm.",
                _intent="ReserveRestaurant",
                restaurant_name="Jade Palace",
                party_size="4",
                date="Thursday",
                time="6:30 pm",
            ),
            s("Please confirm: a table for 4 at Jade Palace in Fremont on Thursday at 6:30 pm."),
            u("Yes, that's right."),
            s("Sorry, 6:30 pm on Thursday is fully booked. Would 6:45 pm work?"),
            u("Sure, 6:45 pm is fine.", time="6:45 pm"),
            s("Please confirm: a table for 4 at Jade Palace on Thursday at 6:45 pm."),
            u("Sorry, I meant to say the table is for 5, my manager is joining.", party_size="5"),
            s("Got it. Your table for 5 at Jade Palace on Thursday at 6:45 pm is booked."),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="two alias-equivalent city changes; class downgraded late",
        turns=[
            u(
                "Search flights from Portland to Washington for next Monday.",
                origin_city="Portland",
                destination_city="Washington",
                departure_date="next Monday",
            ),
            s(
                "Did you mean Washington D.C.? Alaska Airlines has a nonstop from Portland at 6:55 "
                "am for $248."
            ),
            u(
                "Yes, Washington D.C. And I mean Portland, OR, not Maine.",
                destination_city="Washington D.C.",
                origin_city="Portland, OR",
            ),
            s(
                "Got it. The Alaska Airlines flight leaves Portland, OR at 6:55 am and arrives at "
                "Reagan National at 2:40 pm."
            ),
            u("Is there anything later in the day?"),
            s("United has a 1 pm departure arriving at 9:10 pm for $231."),
            u(
                "I'll take the United one in Business class.",
                _intent="BookFlight",
                airline="United",
                seating_class="Business",
            ),
            s(
                "Business on United is $612. Please confirm: 1 Business ticket from Portland, OR "
                "to Washington D.C. next Monday at 1 pm."
            ),
            u("Oh, that's too pricey. Economy will do.", seating_class="Economy"),
            s("Your Economy ticket on United for next Monday is booked."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        note="artist and date switched; tickets raised late",
        turns=[
            u(
                "I love jazz. Are there any jazz concerts in New Orleans next month?",
                category="Music",
                city="New Orleans",
                date="next month",
            ),
            s(
                "The Crescent Street Quartet plays at Preservation Hall on May 3rd, and Delta "
                "Horns plays at the Orpheum on May 10th."
            ),
            u(
                "The Crescent Street Quartet sounds great. 2 tickets, please.",
                _intent="BuyEventTickets",
                event_name="The Crescent Street Quartet",
                date="May 3rd",
                number_of_tickets="2",
            ),
            s(
                "Please confirm: 2 tickets for The Crescent Street Quartet on May 3rd in New "
                "Orleans."
            ),
            u("How much are they?"),
            s("They are $45 each, $90 in total."),
            u(
                "Okay. Actually, I'd rather see Delta Horns on May 10th, my friend loves them.",
                event_name="Delta Horns",
                date="May 10th",
            ),
            s(
                "Please confirm: 2 tickets for Delta Horns on May 10th in New Orleans. They're $38 "
                "each."
            ),
            u(
                "Yes, and actually get 4 tickets. My friend is bringing her kids.",
                number_of_tickets="4",
            ),
            s("Okay: 4 tickets for Delta Horns on May 10th, $152 in total."),
            u("Perfect, buy them."),
            s("Your tickets are purchased. Doors open at 7 pm."),
        ],
    ),
    D(
        "RideSharing_1",
        "GetRide",
        note="destination changed and changed back",
        turns=[
            u(
                "I need a ride from my apartment at 75 Hayes Street to the Ferry Building.",
                pickup_location="75 Hayes Street",
                destination="Ferry Building",
            ),
            s("How many people are riding?", req=["number_of_riders"]),
            u("There will be 2 of us.", number_of_riders="2"),
            s("Would you like a Pool, Regular or Luxury ride?", req=["ride_type"]),
            u("Luxury, it's a special day.", ride_type="Luxury"),
            s("Please confirm: a Luxury ride for 2 from 75 Hayes Street to the Ferry Building."),
            u("Actually we want to go to Pier 39 first.", destination="Pier 39"),
            s("Okay, a Luxury ride for 2 to Pier 39. The fare is about $38."),
            u(
                "Hmm, my wife says we should go to the Ferry Building for brunch after all. Let's "
                "go back to that.",
                destination="Ferry Building",
            ),
            s("Sure, a Luxury ride for 2 from 75 Hayes Street to the Ferry Building."),
            u("Yes, book it."),
            s("Your ride is booked and arrives in 7 minutes."),
        ],
    ),
    D(
        "Movies_1",
        "FindMovies",
        note="show format and time changed after the system's offer",
        turns=[
            u(
                "Are there any action movies playing in Houston tomorrow?",
                genre="action",
                city="Houston",
                show_date="tomorrow",
            ),
            s(
                "Steel Horizon is playing at the Meridian Cinema in Houston tomorrow, in regular "
                "and IMAX formats."
            ),
            u(
                "I'll take 2 tickets for Steel Horizon, regular showing, at 7:10 pm.",
                _intent="BuyMovieTickets",
                movie_name="Steel Horizon",
                number_of_tickets="2",
                show_type="regular",
                show_time="7:10 pm",
                theater_name="Meridian Cinema",
            ),
            s(
                "Please confirm: 2 regular tickets for Steel Horizon at Meridian Cinema tomorrow "
                "at 7:10 pm."
            ),
            u("Hmm, let's do the big screen one instead.", show_type="IMAX"),
            s(
                "The IMAX showing is at 7:40 pm. Please confirm: 2 IMAX tickets for Steel Horizon "
                "tomorrow at 7:40 pm."
            ),
            u("Yes, that works.", show_time="7:40 pm"),
            s("Your tickets are booked."),
            u("Thanks. Can you tell me how long the movie is?"),
            s("Steel Horizon runs 2 hours and 14 minutes."),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        note="check-in date changed and changed back late",
        turns=[
            u("I'd like to book a hotel in Nashville.", city="Nashville"),
            s("How many stars would you like?", req=["star_rating"]),
            u("Anything 3 stars or above.", star_rating="3"),
            s("The Music Row Inn is a 3 star hotel with rooms from $115 a night."),
            u(
                "Okay, book a room there from August 1st to August 4th.",
                _intent="ReserveHotel",
                hotel_name="Music Row Inn",
                check_in_date="August 1st",
                check_out_date="August 4th",
            ),
            s("Please confirm: 1 room at the Music Row Inn, August 1st to August 4th."),
            u(
                "Wait, I need to check in on August 2nd instead. My flight got moved.",
                check_in_date="August 2nd",
            ),
            s(
                "Okay, August 2nd to August 4th at the Music Row Inn. How many rooms?",
                req=["number_of_rooms"],
            ),
            u("Just 1 room, please.", number_of_rooms="1"),
            s("Please confirm: 1 room at the Music Row Inn from August 2nd to August 4th."),
            u(
                "Argh, the airline just called again. The original flight is back on, so August "
                "1st after all.",
                check_in_date="August 1st",
            ),
            s("No problem, 1 room at the Music Row Inn from August 1st to August 4th."),
            u("Yes, please book it."),
            s("Your room is reserved."),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="no revisions",
        turns=[
            u(
                "I want to get some vegetarian food in Berkeley.",
                cuisine="vegetarian",
                city="Berkeley",
            ),
            s("Green Table on Shattuck Avenue is a vegetarian restaurant in Berkeley."),
            u("Are they expensive?", _req=["price_range"]),
            s("No, Green Table is inexpensive."),
            u(
                "Great, reserve a table for 2 at 7:15 pm tonight.",
                _intent="ReserveRestaurant",
                restaurant_name="Green Table",
                party_size="2",
                time="7:15 pm",
                date="tonight",
            ),
            s("Please confirm: a table for 2 at Green Table in Berkeley tonight at 7:15 pm."),
            u("Yes, confirm."),
            s("Your table is reserved."),
        ],
    ),
]
