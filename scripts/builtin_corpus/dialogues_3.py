"""Dialogues of `test/dialogues_003.json` (ids `3_00000`, `3_00001`, ...), in order.

Each `D(...)` is one dialogue; its index in `DIALOGUES` is its id suffix, so append new
dialogues at the end to keep the existing ids stable.
"""

from dsl import D, s, u

DIALOGUES: list[D] = [
    D(
        "Flights_1",
        "SearchFlight",
        note="flight then car; alias city late; drop-off extended late",
        turns=[
            u(
                "I need a flight from Boston to Orlando on December 20th.",
                origin_city="Boston",
                destination_city="Orlando",
                departure_date="December 20th",
            ),
            s("JetBlue has a nonstop at 11:25 am for $187."),
            u(
                "Sounds good. Book 3 seats in Economy for my family.",
                _intent="BookFlight",
                airline="JetBlue",
                passengers="3",
                seating_class="Economy",
            ),
            s(
                "Please confirm: 3 Economy tickets on JetBlue from Boston to Orlando on December "
                "20th."
            ),
            u("Yes, please."),
            s("Your flights are booked."),
            u(
                "I also need a rental car when we land.",
                _svc="RentalCars_1",
                _intent="GetCars",
                pickup_city="Orlando",
                pickup_date="December 20th",
            ),
            s("Until when will you need it?", req=["dropoff_date"]),
            u("Until December 27th.", dropoff_date="December 27th"),
            s(
                "A Standard Honda Accord is available at Orlando International Airport for $44 a "
                "day."
            ),
            u("We have lots of bags. Can we get an SUV?", car_type="SUV"),
            s(
                "A Chevy Tahoe SUV is available for $69 a day. What time will you pick it up?",
                req=["pickup_time"],
            ),
            u(
                "Around 2 pm. Oh, and make it the Orlando, FL airport, just to be clear.",
                _intent="ReserveCar",
                pickup_time="2 pm",
                pickup_city="Orlando, FL",
            ),
            s(
                "Please confirm: SUV pickup at the Orlando, FL airport on December 20th at 2 pm, "
                "returning December 27th."
            ),
            u(
                "Actually we fly home on December 28th, so we'll return it then.",
                dropoff_date="December 28th",
            ),
            s("Your Chevy Tahoe is reserved from December 20th to December 28th."),
        ],
    ),
    D(
        "Calendar_1",
        "AddEvent",
        note="repeated identical date and time; time revised late",
        turns=[
            u(
                "Add a meeting with the landlord to my calendar on June 2nd at 10 am.",
                event_name="meeting with the landlord",
                event_date="June 2nd",
                event_time="10 am",
            ),
            s("Where is the meeting?", req=["event_location"]),
            u("At my apartment, 42 Birch Lane.", event_location="42 Birch Lane"),
            s("Please confirm: meeting with the landlord on June 2nd at 10 am at 42 Birch Lane."),
            u("Yes, exactly, June 2nd at 10 am.", event_date="June 2nd", event_time="10 am"),
            s("The event has been added."),
            u("Also, can you tell me what else I have on June 2nd?", _intent="GetEvents"),
            s("You also have a dentist appointment at 3 pm on June 2nd."),
            u(
                "Oh no, the landlord meeting should actually be at 11:30 am. Can you change it?",
                _intent="AddEvent",
                event_time="11:30 am",
            ),
            s("Updated: meeting with the landlord on June 2nd at 11:30 am at 42 Birch Lane."),
            u("Thank you, that's all."),
            s("You're welcome. Have a great day."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        note="no revisions",
        turns=[
            u(
                "Find me a baseball game in Denver on July 4th.",
                category="Sports",
                city="Denver",
                date="July 4th",
            ),
            s("Peaks vs Pelicans is on July 4th at 6:10 pm at Mile High Park."),
            u(
                "I'd like 2 tickets to that.",
                _intent="BuyEventTickets",
                event_name="Peaks vs Pelicans",
                number_of_tickets="2",
            ),
            s("Please confirm: 2 tickets for Peaks vs Pelicans on July 4th in Denver."),
            u("Yes."),
            s("Your tickets are booked. There will be fireworks after the game."),
            u("Awesome, thanks."),
            s("Enjoy the game!"),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="three late revisions of one booking",
        turns=[
            u(
                "My parents are visiting next week. Can you help me find a seafood restaurant in "
                "Monterey?",
                cuisine="seafood",
                city="Monterey",
            ),
            s("Harbor Grill on Cannery Row serves seafood in Monterey and is moderately priced."),
            u("My dad loves oysters. Do they serve oysters?"),
            s("Yes, Harbor Grill has a raw bar with oysters."),
            u("Great. Do they have outdoor seating?", _req=["outdoor_seating"]),
            s("Yes, they have a deck overlooking the bay."),
            u(
                "Perfect. Book a table for 4 on Wednesday at 6 pm.",
                _intent="ReserveRestaurant",
                restaurant_name="Harbor Grill",
                party_size="4",
                date="Wednesday",
                time="6 pm",
            ),
            s("Please confirm: a table for 4 at Harbor Grill in Monterey on Wednesday at 6 pm."),
            u("Let me check with my mom first."),
            s("Sure, take your time."),
            u(
                "She says on Wednesday they'll be tired from the drive. Can we do Thursday?",
                date="Thursday",
            ),
            s("Please confirm: a table for 4 at Harbor Grill on Thursday at 6 pm."),
            u("And sunset is late, so 7:30 pm would be nicer.", time="7:30 pm"),
            s("Okay: Thursday at 7:30 pm for 4 at Harbor Grill."),
            u("Oh, and my brother is coming, so 5 people.", party_size="5"),
            s("Please confirm: a table for 5 at Harbor Grill in Monterey on Thursday at 7:30 pm."),
            u("Yes, that's everything."),
            s("Your table is booked. Enjoy dinner with your family!"),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        absent=("city",),
        note="city changed to a spelling never used in the text (St. Paul -> Saint Paul)",
        turns=[
            u(
                "I need a hotel in Minneapolis for 2 nights from October 4th.",
                city="Minneapolis",
                check_in_date="October 4th",
            ),
            s("The Riverfront Hotel in Minneapolis is a 4 star hotel at $179 a night."),
            u("Actually, my event is in St. Paul. Can you look there instead?", city="Saint Paul"),
            s("The Capitol View Inn in St. Paul has 3 stars and costs $139 a night."),
            u("Does it have free wifi?", _req=["has_wifi"]),
            s("Yes, free wifi is included."),
            u(
                "Book it, checking out October 6th.",
                _intent="ReserveHotel",
                hotel_name="Capitol View Inn",
                check_out_date="October 6th",
            ),
            s("Please confirm: 1 room at the Capitol View Inn from October 4th to October 6th."),
            u("Yes, go ahead.", number_of_rooms="1"),
            s("Your room is booked."),
        ],
    ),
    D(
        "RideSharing_1",
        "GetRide",
        note="ride type correction",
        turns=[
            u(
                "Get me a Luxury ride to the Grand Theater, please.",
                ride_type="Luxury",
                destination="Grand Theater",
            ),
            s("Where should the driver pick you up?", req=["pickup_location"]),
            u("At 3300 Broadway.", pickup_location="3300 Broadway"),
            s("How many riders?", req=["number_of_riders"]),
            u("4 riders.", number_of_riders="4"),
            s("Please confirm: a Luxury ride for 4 from 3300 Broadway to the Grand Theater."),
            u("Sorry, I meant a Regular ride, not Luxury. We're on a budget.", ride_type="Regular"),
            s("Okay, a Regular ride for 4 to the Grand Theater. It's about $16."),
            u("Book it, thanks."),
            s("Your ride is booked and will arrive in 5 minutes."),
        ],
    ),
    D(
        "Movies_1",
        "FindMovies",
        note="theater, time and date revised late",
        turns=[
            u("Can you find me a drama to watch in Austin?", genre="drama", city="Austin"),
            s("The Quiet Orchard is a drama playing at the Violet Crown Cinema in Austin."),
            u("What's it about?"),
            s("It follows a family running an apple farm through a hard winter."),
            u("Sounds good. Are there shows on Saturday?", show_date="Saturday"),
            s("Yes, at 4 pm and 7:45 pm on Saturday."),
            u(
                "I'll get 2 tickets for the 7:45 pm show.",
                _intent="BuyMovieTickets",
                movie_name="The Quiet Orchard",
                theater_name="Violet Crown Cinema",
                number_of_tickets="2",
                show_time="7:45 pm",
            ),
            s(
                "Please confirm: 2 tickets for The Quiet Orchard at Violet Crown Cinema on "
                "Saturday at 7:45 pm."
            ),
            u("Hmm, is it also showing anywhere closer to the north side?"),
            s("It's also at the Arbor Cinema on Saturday at 7:30 pm."),
            u(
                "Let's do the Arbor Cinema at 7:30 pm then.",
                theater_name="Arbor Cinema",
                show_time="7:30 pm",
            ),
            s(
                "Please confirm: 2 tickets for The Quiet Orchard at Arbor Cinema on Saturday at "
                "7:30 pm."
            ),
            u(
                "Wait, on Saturday we have a birthday party. Is Sunday at the same time possible?",
                show_date="Sunday",
            ),
            s(
                "Yes, Arbor Cinema has a 7:30 pm show on Sunday too. Please confirm: 2 tickets for "
                "Sunday at 7:30 pm."
            ),
            u("Yes, book those."),
            s("Your tickets are booked."),
        ],
    ),
    D(
        "RentalCars_1",
        "GetCars",
        note="pickup time correction (am/pm)",
        turns=[
            u(
                "Rent me a Compact car in Phoenix for tomorrow.",
                car_type="Compact",
                pickup_city="Phoenix",
                pickup_date="tomorrow",
            ),
            s(
                "Until what day, and what time will you pick it up?",
                req=["dropoff_date", "pickup_time"],
            ),
            u(
                "Until Sunday, and I'll pick it up at 9 am.",
                dropoff_date="Sunday",
                pickup_time="9 am",
            ),
            s(
                "A Compact Nissan Versa is available at Phoenix Sky Harbor for $33 a day. Shall I "
                "reserve it?"
            ),
            u("Sorry, I meant 9 pm, not 9 am. I land late.", pickup_time="9 pm"),
            s("Please confirm: Compact car in Phoenix, pickup tomorrow at 9 pm, return Sunday."),
            u("Yes, please.", _intent="ReserveCar"),
            s("Your car is reserved."),
        ],
    ),
    D(
        "Calendar_1",
        "AddEvent",
        note="time and location revised late",
        turns=[
            u("I want to schedule a piano lesson for my daughter.", event_name="piano lesson"),
            s("Sure, on what date?", req=["event_date"]),
            u("Next Wednesday, September 10th.", event_date="September 10th"),
            s("What time does it start?", req=["event_time"]),
            u("4:30 pm.", event_time="4:30 pm"),
            s("And where is it?", req=["event_location"]),
            u("At the Harmony Music School.", event_location="Harmony Music School"),
            s("Please confirm: piano lesson on September 10th at 4:30 pm at Harmony Music School."),
            u("Hmm, let me double check the time with the teacher."),
            s("Of course."),
            u("The teacher says 5 pm works better for her.", event_time="5 pm"),
            s("Okay: piano lesson on September 10th at 5 pm at Harmony Music School."),
            u(
                "And the lesson is at her home studio, 18 Elm Court, not the school.",
                event_location="18 Elm Court",
            ),
            s("Updated and saved: piano lesson on September 10th at 5 pm at 18 Elm Court."),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="no revisions",
        turns=[
            u(
                "Look for a one way flight from Houston to Denver on February 3rd in Business "
                "class.",
                origin_city="Houston",
                destination_city="Denver",
                departure_date="February 3rd",
                seating_class="Business",
            ),
            s("United has a nonstop Business flight at 8 am for $398."),
            u("Book it for 1 passenger.", _intent="BookFlight", airline="United", passengers="1"),
            s(
                "Please confirm: 1 Business ticket on United from Houston to Denver on February "
                "3rd."
            ),
            u("Yes, please."),
            s("Your flight is booked."),
            u("What terminal does it leave from?"),
            s("It leaves from Terminal C."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        note="show then dinner; late revisions in both services",
        turns=[
            u(
                "Is there a comedy show in Portland on Friday?",
                category="Comedy",
                city="Portland",
                date="Friday",
            ),
            s("Lena Ortiz is doing stand-up at the Laughing Owl on Friday at 8 pm."),
            u(
                "Get me 2 tickets for that.",
                _intent="BuyEventTickets",
                event_name="Lena Ortiz",
                number_of_tickets="2",
            ),
            s("Please confirm: 2 tickets for Lena Ortiz on Friday in Portland."),
            u("Yes."),
            s("Done, your tickets are booked."),
            u(
                "Now I need a place for dinner before the show, maybe Indian food.",
                _svc="Restaurants_1",
                _intent="FindRestaurants",
                cuisine="Indian",
                city="Portland",
            ),
            s("Saffron House is an Indian restaurant two blocks from the Laughing Owl."),
            u(
                "Book a table for 2 at 6 pm on Friday.",
                _intent="ReserveRestaurant",
                restaurant_name="Saffron House",
                party_size="2",
                time="6 pm",
                date="Friday",
            ),
            s("Please confirm: a table for 2 at Saffron House in Portland on Friday at 6 pm."),
            u(
                "Hmm, give us more time, 6:15 pm please, and my friend Sam is joining, so 3.",
                time="6:15 pm",
                party_size="3",
            ),
            s("Please confirm: a table for 3 at Saffron House on Friday at 6:15 pm."),
            u(
                "Yes. And that means I need 3 tickets for the show too.",
                _svc="Events_1",
                number_of_tickets="3",
            ),
            s("I've added 1 more ticket for Lena Ortiz. You now have 3 tickets for Friday."),
            u("Great, thanks for your help."),
            s("Enjoy your evening!"),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        note="dates moved a week; alias-equivalent check-out",
        turns=[
            u(
                "I need a hotel in San Antonio near the River Walk for this Friday.",
                city="San Antonio",
                check_in_date="this Friday",
            ),
            s("The Alamo Plaza Hotel is a 4 star hotel right on the River Walk, $199 a night."),
            u("How about something with 3 stars? I don't need anything fancy.", star_rating="3"),
            s(
                "The Mission Stay Inn is a 3 star hotel a short walk from the River Walk, $112 a "
                "night."
            ),
            u(
                "Okay. Book 1 room there, checking out Sunday.",
                _intent="ReserveHotel",
                hotel_name="Mission Stay Inn",
                number_of_rooms="1",
                check_out_date="Sunday",
            ),
            s(
                "Please confirm: 1 room at the Mission Stay Inn, checking in this Friday and "
                "checking out Sunday."
            ),
            u(
                "Oops, I mixed up the weeks. I meant next Friday, and out the Sunday after.",
                check_in_date="next Friday",
                check_out_date="the Sunday after",
            ),
            s("Got it: 1 room at the Mission Stay Inn from next Friday to the Sunday after."),
            u("Do they allow pets? I have a small dog.", _req=["pets_allowed"]),
            s("Yes, pets are welcome at the Mission Stay Inn for a $20 fee."),
            u("Great, then please book it.", pets_allowed="True"),
            s("Your room is booked. Check-in is from 3 pm."),
        ],
    ),
    D(
        "Movies_1",
        "BuyMovieTickets",
        note="ticket count changed twice",
        turns=[
            u(
                "Buy 2 tickets for Galaxy Runners at the Bayside Cinema in Long Beach tonight.",
                movie_name="Galaxy Runners",
                theater_name="Bayside Cinema",
                city="Long Beach",
                number_of_tickets="2",
                show_date="tonight",
            ),
            s("It's showing at 7 pm and 9:50 pm. Which one would you like?", req=["show_time"]),
            u("7 pm, please.", show_time="7 pm"),
            s("Please confirm: 2 tickets for Galaxy Runners at Bayside Cinema tonight at 7 pm."),
            u("Make that 5 tickets, the neighbors' kids want to come.", number_of_tickets="5"),
            s("Please confirm: 5 tickets for Galaxy Runners tonight at 7 pm."),
            u("Ugh, one of them is sick. 4 tickets then.", number_of_tickets="4"),
            s(
                "Okay, 4 tickets for Galaxy Runners at Bayside Cinema tonight at 7 pm. Shall I buy "
                "them?"
            ),
            u("Yes please."),
            s("Your tickets are purchased."),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="time restated in a second surface form: the value set gains an alternative",
        turns=[
            u("Find a Korean barbecue place in Los Angeles.", cuisine="Korean", city="Los Angeles"),
            s("Seoul Garden in Koreatown is a popular Korean barbecue restaurant in Los Angeles."),
            u("Is it pricey?", _req=["price_range"]),
            s("It's moderately priced, around $30 per person."),
            u(
                "Good. Book a table for 2 tomorrow at 6 pm.",
                _intent="ReserveRestaurant",
                restaurant_name="Seoul Garden",
                party_size="2",
                date="tomorrow",
                time="6 pm",
            ),
            s("Please confirm: a table for 2 at Seoul Garden in Los Angeles tomorrow at 6 pm."),
            u("Can we do it later, at 7 in the evening?", time="7 in the evening"),
            s("Sure. Please confirm: a table for 2 at Seoul Garden tomorrow at 7 pm."),
            u("Yes, 7 pm is right.", time=["7 in the evening", "7 pm"]),
            s("Your table is booked. Seoul Garden is at 3930 Olympic Boulevard."),
            u("Do they have parking?"),
            s("Yes, they have a small lot behind the restaurant."),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="return date and class revised late",
        turns=[
            u(
                "I'd like to book a round trip from San Francisco to Honolulu.",
                origin_city="San Francisco",
                destination_city="Honolulu",
            ),
            s("What dates are you traveling?", req=["departure_date", "return_date"]),
            u(
                "Leaving November 3rd and returning November 10th.",
                departure_date="November 3rd",
                return_date="November 10th",
            ),
            s("Hawaiian Airlines has a round trip for $412 in Economy."),
            u("That's fine. How many stops?"),
            s("Both flights are nonstop."),
            u(
                "Good. Book it for 2 passengers.",
                _intent="BookFlight",
                airline="Hawaiian Airlines",
                passengers="2",
                seating_class="Economy",
            ),
            s(
                "Please confirm: 2 Economy tickets on Hawaiian Airlines from San Francisco to "
                "Honolulu, November 3rd to November 10th."
            ),
            u(
                "Hmm, we decided to stay longer. Can we come back on November 12th?",
                return_date="November 12th",
            ),
            s(
                "The return on November 12th is $30 more per person. Please confirm: November 3rd "
                "to November 12th."
            ),
            u("Also, upgrade us to Premium Economy if possible.", seating_class="Premium Economy"),
            s(
                "Premium Economy is available for $598 per person. Please confirm: 2 Premium "
                "Economy tickets, November 3rd to November 12th."
            ),
            u("Yes, go ahead."),
            s("Your flights are booked. Aloha!"),
        ],
    ),
    D(
        "RideSharing_1",
        "GetRide",
        note="no revisions",
        turns=[
            u(
                "I need a ride for 2 to the train station.",
                number_of_riders="2",
                destination="the train station",
            ),
            s("Where should I pick you up?", req=["pickup_location"]),
            u("From the Riverside Mall.", pickup_location="Riverside Mall"),
            s("Please confirm: a Regular ride for 2 from Riverside Mall to the train station."),
            u("Yes, thanks.", ride_type="Regular"),
            s("Your ride is booked and arrives in 3 minutes."),
        ],
    ),
    D(
        "Calendar_1",
        "GetEvents",
        note="date revised, then an event added",
        turns=[
            u("Do I have anything scheduled on October 21st?", event_date="October 21st"),
            s("You have a team offsite from 9 am to 5 pm on October 21st."),
            u("What about the 22nd?", event_date="the 22nd"),
            s("On October 22nd you have a doctor's appointment at 10:30 am."),
            u(
                "Okay. Add a dinner with Marco that evening at 7 pm.",
                _intent="AddEvent",
                event_name="dinner with Marco",
                event_time="7 pm",
            ),
            s("Where will the dinner be?", req=["event_location"]),
            u("At Osteria Nova.", event_location="Osteria Nova"),
            s("Please confirm: dinner with Marco on October 22nd at 7 pm at Osteria Nova."),
            u("Yes, add it."),
            s("It's been added to your calendar."),
        ],
    ),
]
