"""Dialogues of `test/dialogues_001.json` (ids `1_00000`, `1_00001`, ...), in order.

Each `D(...)` is one dialogue; its index in `DIALOGUES` is its id suffix, so append new
dialogues at the end to keep the existing ids stable.
"""

from dsl import D, s, u

DIALOGUES: list[D] = [
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="party size and time revised late",
        turns=[
            u(
                "Hi, I'm looking for a good Italian restaurant in San Jose.",
                city="San Jose",
                cuisine="Italian",
            ),
            s(
                "I found 6 Italian restaurants in San Jose. Il Fornaio on Cahill Street is a "
                "popular one. Does that work?"
            ),
            u(
                "Is there something a bit cheaper? Moderate prices would be ideal.",
                price_range="moderate",
            ),
            s("Sure. Pasta Pomodoro is a moderately priced Italian place in San Jose."),
            u(
                "That sounds good. Can I book a table there for 4 people?",
                _intent="ReserveRestaurant",
                restaurant_name="Pasta Pomodoro",
                party_size="4",
            ),
            s("What day and time would you like?", req=["date", "time"]),
            u("This Saturday at 7 pm, please.", date="This Saturday", time="7 pm"),
            s("Please confirm: a table for 4 at Pasta Pomodoro in San Jose this Saturday at 7 pm."),
            u("Hmm, actually one more friend is joining, so make it 5 people.", party_size="5"),
            s(
                "No problem. A table for 5 at Pasta Pomodoro this Saturday at 7 pm. Shall I book "
                "it?"
            ),
            u("Wait, can we push it to 7:30 pm? Some of us finish work late.", time="7:30 pm"),
            s(
                "Please confirm: a table for 5 at Pasta Pomodoro in San Jose this Saturday at 7:30 "
                "pm."
            ),
            u("Yes, that's right. Please go ahead."),
            s("Your table is booked. The restaurant's phone number is 408-555-0182."),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        note="alias city change; check-out correction late",
        turns=[
            u("I need a hotel in Atlanta for a conference next week.", city="Atlanta"),
            s("Do you have a star rating in mind?", req=["star_rating"]),
            u("At least 3 stars, and it has to have free wifi.", star_rating="3", has_wifi="True"),
            s(
                "The Glenwood Inn in Atlanta, GA is a 3 star hotel with free wifi. Rooms are $120 "
                "a night."
            ),
            u(
                "Is that the one near downtown Atlanta, GA? That's where the conference is.",
                city="Atlanta, GA",
            ),
            s("Yes, it is about ten minutes from downtown."),
            u(
                "Great. Let's book it from March 11th to March 14th.",
                _intent="ReserveHotel",
                hotel_name="Glenwood Inn",
                check_in_date="March 11th",
                check_out_date="March 14th",
            ),
            s(
                "Please confirm: 1 room at the Glenwood Inn, checking in March 11th and checking "
                "out March 14th."
            ),
            u(
                "Oh, sorry, I meant checking out on March 15th. The conference ends on the 14th.",
                check_out_date="March 15th",
            ),
            s(
                "Got it: 1 room at the Glenwood Inn from March 11th to March 15th. Shall I reserve "
                "it?"
            ),
            u("Yes please.", number_of_rooms="1"),
            s("Your room is reserved. Check-in starts at 3 pm."),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="date revision; alias destination change late",
        turns=[
            u(
                "Can you find me a flight from Chicago to New York on April 2nd?",
                origin_city="Chicago",
                destination_city="New York",
                departure_date="April 2nd",
            ),
            s("I found a United Airlines flight leaving at 8:15 am with 1 stop. It costs $189."),
            u("I'd prefer a direct flight. Are there any with Delta?", airline="Delta"),
            s("Delta has a nonstop flight at 11:40 am for $214 in Economy."),
            u(
                "Actually, could you check April 3rd instead? I might need the extra day.",
                departure_date="April 3rd",
            ),
            s("On April 3rd Delta has a nonstop at 10:05 am for $199, landing at LaGuardia."),
            u(
                "That works. Make sure it lands in New York City, not Newark.",
                destination_city="New York City",
            ),
            s("Yes, it arrives at LaGuardia Airport in New York City at 1:15 pm."),
            u(
                "Great, please book it in Economy for 1 passenger.",
                _intent="BookFlight",
                seating_class="Economy",
                passengers="1",
            ),
            s(
                "Please confirm: 1 Economy seat on Delta from Chicago to New York City on April "
                "3rd, departing 10:05 am."
            ),
            u("Yes, book it."),
            s("Your flight is booked. You will get the e-ticket by email."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        note="ticket count changed twice",
        turns=[
            u(
                "Are there any music events in Seattle this weekend?",
                category="Music",
                city="Seattle",
                date="this weekend",
            ),
            s(
                "The Velvet Pines play at the Harbor Pavilion on Saturday, and Copper Lake plays "
                "at Moore Hall on Sunday."
            ),
            u(
                "The Velvet Pines show on Saturday sounds fun. I need 2 tickets.",
                _intent="BuyEventTickets",
                event_name="The Velvet Pines",
                date="Saturday",
                number_of_tickets="2",
            ),
            s("Please confirm: 2 tickets for The Velvet Pines in Seattle on Saturday."),
            u("Oh wait, my sister wants to come too. Make it 3.", number_of_tickets="3"),
            s("Sure, 3 tickets for The Velvet Pines on Saturday. Shall I buy them?"),
            u(
                "Hold on, she just texted that she can't make it, and my two cousins are coming "
                "instead. So 4 tickets.",
                number_of_tickets="4",
            ),
            s("Okay, 4 tickets for The Velvet Pines in Seattle on Saturday. Is that right?"),
            u("Yes, that's it."),
            s("Your tickets are purchased. The show starts at 8 pm."),
        ],
    ),
    D(
        "Calendar_1",
        "AddEvent",
        note="time correction; repeated identical date",
        turns=[
            u(
                "Please add a dentist appointment to my calendar on May 6th.",
                event_name="dentist appointment",
                event_date="May 6th",
            ),
            s("What time is the appointment?", req=["event_time"]),
            u("It's at 2 pm.", event_time="2 pm"),
            s("Where is it taking place?", req=["event_location"]),
            u(
                "At the Bayview Dental Clinic on Fifth Street.",
                event_location="Bayview Dental Clinic",
            ),
            s("Please confirm: dentist appointment on May 6th at 2 pm at Bayview Dental Clinic."),
            u("Sorry, I meant 3 pm, not 2 pm.", event_time="3 pm"),
            s(
                "Updated: dentist appointment on May 6th at 3 pm at Bayview Dental Clinic. Shall I "
                "save it?"
            ),
            u("Yes. And it's definitely May 6th, just to be sure.", event_date="May 6th"),
            s("Yes, it's on May 6th. The event has been added to your calendar."),
        ],
    ),
    D(
        "RideSharing_1",
        "GetRide",
        absent=("destination",),
        note="destination changed to a value never said literally (SFO)",
        turns=[
            u("Can you get me a cab to 1450 Mission Street?", destination="1450 Mission Street"),
            s("How many riders will there be?", req=["number_of_riders"]),
            u("Just 2 of us.", number_of_riders="2"),
            s("Would you like a Pool, Regular or Luxury ride?", req=["ride_type"]),
            u("Regular is fine.", ride_type="Regular"),
            s("Please confirm: a Regular ride for 2 to 1450 Mission Street."),
            u(
                "Oh, change of plans, we need to go straight to SFO instead.",
                destination="San Francisco International Airport",
            ),
            s("Sure, a Regular ride for 2 to SFO. The fare is about $42. Shall I book it?"),
            u("Yes, book it."),
            s("Your ride is on its way and will arrive in 6 minutes."),
        ],
    ),
    D(
        "Movies_1",
        "FindMovies",
        note="show time revised",
        turns=[
            u(
                "I want to watch a comedy in Berkeley tonight.",
                genre="comedy",
                city="Berkeley",
                show_date="tonight",
            ),
            s("I found 3 comedies. How about Cousin Gerald at the Rialto Cinemas?"),
            u("Cousin Gerald sounds good. What times is it showing?", movie_name="Cousin Gerald"),
            s("It's showing at 6:30 pm and 9 pm at the Rialto Cinemas."),
            u(
                "Let's get 2 tickets for the 6:30 pm show.",
                _intent="BuyMovieTickets",
                show_time="6:30 pm",
                number_of_tickets="2",
                theater_name="Rialto Cinemas",
            ),
            s("Please confirm: 2 tickets for Cousin Gerald at Rialto Cinemas tonight at 6:30 pm."),
            u(
                "Hmm, I don't think I can make it from work by then. The 9 pm show instead, "
                "please.",
                show_time="9 pm",
            ),
            s("Okay, 2 tickets for Cousin Gerald tonight at 9 pm. Anything else?"),
            u("Also, is it a regular showing or 3D?"),
            s("The 9 pm show is a regular showing."),
            u("Regular is perfect. Go ahead and book it.", show_type="regular"),
            s("Your tickets are booked. Enjoy the movie!"),
        ],
    ),
    D(
        "RentalCars_1",
        "GetCars",
        note="drop-off date extended late",
        turns=[
            u(
                "I need to rent a car in Denver starting March 20th.",
                pickup_city="Denver",
                pickup_date="March 20th",
            ),
            s("Until when will you need the car?", req=["dropoff_date"]),
            u("I'll return it on March 24th.", dropoff_date="March 24th"),
            s(
                "There's a Compact Toyota Corolla available at Denver International Airport for "
                "$38 a day."
            ),
            u("I'd like something bigger, an SUV please.", car_type="SUV"),
            s("There's a Ford Explorer SUV at Denver Union Station for $61 a day."),
            u("Great. I'll pick it up at 10 am.", _intent="ReserveCar", pickup_time="10 am"),
            s("Please confirm: SUV pickup in Denver on March 20th at 10 am, returning March 24th."),
            u("Actually, I'll keep it one more day, until March 25th.", dropoff_date="March 25th"),
            s(
                "Got it. Your Ford Explorer is reserved from March 20th to March 25th. The total "
                "is $366."
            ),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="restaurant then ride; pickup changed late",
        turns=[
            u("I'd like to find a Thai restaurant in Oakland.", cuisine="Thai", city="Oakland"),
            s("Lotus Garden on Grand Avenue in Oakland is well reviewed. It's moderately priced."),
            u("Do they have outdoor seating?", _req=["outdoor_seating"]),
            s("Yes, Lotus Garden has a patio."),
            u(
                "Perfect. Book a table for 2 there on Friday at 6 pm.",
                _intent="ReserveRestaurant",
                restaurant_name="Lotus Garden",
                party_size="2",
                date="Friday",
                time="6 pm",
            ),
            s("Please confirm: a table for 2 at Lotus Garden in Oakland on Friday at 6 pm."),
            u("Yes, that's fine."),
            s("Your table is reserved. Anything else?"),
            u(
                "I'll also need a ride there from my office at 500 Howard Street.",
                _svc="RideSharing_1",
                _intent="GetRide",
                pickup_location="500 Howard Street",
                destination="Lotus Garden",
            ),
            s("How many people will ride?", req=["number_of_riders"]),
            u("Just me, so 1 rider.", number_of_riders="1"),
            s("Please confirm: a Pool ride for 1 from 500 Howard Street to Lotus Garden."),
            u("Make it a Regular ride, I don't want to share.", ride_type="Regular"),
            s("Okay, a Regular ride for 1 from 500 Howard Street to Lotus Garden."),
            u(
                "Oh, my plans changed: pick me up at 1 Market Street instead, I'll be at a meeting "
                "there.",
                pickup_location="1 Market Street",
            ),
            s("Done. Your Regular ride will pick you up at 1 Market Street at 5:40 pm."),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        note="hotel changed twice, back to the first",
        turns=[
            u(
                "I'm looking for a pet-friendly hotel in Portland.",
                city="Portland",
                pets_allowed="True",
            ),
            s("The Hawthorne Lodge in Portland allows pets and is rated 3 stars."),
            u("Anything with 4 stars?", star_rating="4"),
            s("The Alder Park Hotel is a 4 star hotel in Portland that welcomes pets."),
            u(
                "Sounds nice. I'd like a room from June 3rd to June 6th.",
                _intent="ReserveHotel",
                hotel_name="Alder Park Hotel",
                check_in_date="June 3rd",
                check_out_date="June 6th",
            ),
            s(
                "Please confirm: 1 room at the Alder Park Hotel, June 3rd to June 6th. It's $210 "
                "per night."
            ),
            u(
                "That's over my budget. Let's go with the Hawthorne Lodge instead.",
                hotel_name="Hawthorne Lodge",
            ),
            s(
                "The Hawthorne Lodge is $135 per night. Please confirm: 1 room from June 3rd to "
                "June 6th."
            ),
            u("Hmm, what's the wifi situation there?", _req=["has_wifi"]),
            s("The Hawthorne Lodge offers free wifi in every room."),
            u(
                "On second thought, my dog is big and the Alder Park Hotel has a dog park. Book "
                "the Alder Park Hotel after all.",
                hotel_name="Alder Park Hotel",
            ),
            s(
                "Please confirm: 1 room at the Alder Park Hotel from June 3rd to June 6th at $210 "
                "per night."
            ),
            u("Yes, confirmed.", number_of_rooms="1"),
            s("Your reservation is complete. The hotel is at 88 Alder Street."),
        ],
    ),
    D(
        "Flights_1",
        "SearchFlight",
        note="origin correction; passengers revised late",
        turns=[
            u("I need a round trip flight to Boston.", destination_city="Boston"),
            s(
                "Where will you be flying from, and on what dates?",
                req=["origin_city", "departure_date"],
            ),
            u(
                "From Denver, leaving May 12th and coming back May 16th.",
                origin_city="Denver",
                departure_date="May 12th",
                return_date="May 16th",
            ),
            s("JetBlue has a round trip from Denver to Boston for $342 in Economy."),
            u("Sorry, I meant from Dallas, not Denver.", origin_city="Dallas"),
            s(
                "No problem. American Airlines flies from Dallas to Boston, leaving May 12th at "
                "7:20 am and returning May 16th at 5:45 pm, for $298."
            ),
            u("That works. Is there a Premium Economy option?"),
            s("Yes, Premium Economy is $419 round trip."),
            u(
                "Okay, let's do Premium Economy then, just 1 passenger.",
                _intent="BookFlight",
                airline="American Airlines",
                seating_class="Premium Economy",
                passengers="1",
            ),
            s(
                "Please confirm: 1 Premium Economy ticket on American Airlines, Dallas to Boston, "
                "May 12th to May 16th."
            ),
            u("Actually, I'll be bringing my colleague, so 2 passengers.", passengers="2"),
            s(
                "Please confirm: 2 Premium Economy tickets on American Airlines from Dallas to "
                "Boston, May 12th to May 16th, $838 in total."
            ),
            u("Yes, go ahead."),
            s("Your tickets are booked."),
        ],
    ),
    D(
        "Events_1",
        "FindEvents",
        note="event and date switched mid-dialogue",
        turns=[
            u(
                "I'd like to go to a sports event in Los Angeles, ideally basketball.",
                category="Sports",
                city="Los Angeles",
            ),
            s("Hawks vs Comets is on March 9th at Seaside Arena."),
            u(
                "That's a Saturday, right? I'll take 2 tickets.",
                _intent="BuyEventTickets",
                event_name="Hawks vs Comets",
                date="March 9th",
                number_of_tickets="2",
            ),
            s(
                "Yes, it is a Saturday. Please confirm: 2 tickets for Hawks vs Comets on March 9th "
                "in Los Angeles."
            ),
            u("Wait, I just remembered I have a wedding that day. Is there another game?"),
            s("Hawks vs Rangers is on March 16th at the same arena."),
            u(
                "Great, let's get the tickets for that one instead.",
                event_name="Hawks vs Rangers",
                date="March 16th",
            ),
            s("Please confirm: 2 tickets for Hawks vs Rangers on March 16th in Los Angeles."),
            u("Yes. How much will that be?"),
            s("It will be $96 in total. Shall I complete the purchase?"),
            u("Yes, please do."),
            s("Your tickets are booked. The game starts at 7:30 pm."),
        ],
    ),
    D(
        "Restaurants_1",
        "FindRestaurants",
        note="city correction; time revised",
        turns=[
            u("Find me a sushi place in Palo Alto, please.", cuisine="sushi", city="Palo Alto"),
            s("Jin Sho on California Avenue is a popular sushi restaurant in Palo Alto."),
            u("Sorry, I meant Mountain View, not Palo Alto.", city="Mountain View"),
            s("In Mountain View, Sakura Bay serves sushi and is moderately priced."),
            u(
                "Can I reserve a table at Sakura Bay for 3 tomorrow at 12:30 pm?",
                _intent="ReserveRestaurant",
                restaurant_name="Sakura Bay",
                party_size="3",
                date="tomorrow",
                time="12:30 pm",
            ),
            s("Please confirm: a table for 3 at Sakura Bay in Mountain View tomorrow at 12:30 pm."),
            u("Make it 1 pm instead.", time="1 pm"),
            s("Okay, a table for 3 at Sakura Bay tomorrow at 1 pm. Shall I book?"),
            u("Yes, thanks."),
            s("Your reservation is confirmed."),
        ],
    ),
    D(
        "Calendar_1",
        "AddEvent",
        note="location and time revised late",
        turns=[
            u(
                "Can you add a team lunch to my calendar for next Tuesday?",
                event_name="team lunch",
                event_date="next Tuesday",
            ),
            s("Sure. What time does it start?", req=["event_time"]),
            u("At noon.", event_time="noon"),
            s("Where will it be?", req=["event_location"]),
            u("At Marigold Kitchen on Pine Street.", event_location="Marigold Kitchen"),
            s("Please confirm: team lunch next Tuesday at noon at Marigold Kitchen."),
            u("Yes, please add it."),
            s("It's on your calendar. Anything else?"),
            u(
                "Actually, the team just voted to eat at Sunny Bowl instead. Can you update the "
                "location?",
                event_location="Sunny Bowl",
            ),
            s("Updated: team lunch next Tuesday at noon at Sunny Bowl."),
            u("And it starts at 12:30 pm, not noon.", event_time="12:30 pm"),
            s("Done. The team lunch now starts at 12:30 pm at Sunny Bowl."),
        ],
    ),
    D(
        "Movies_1",
        "FindMovies",
        note="genre, movie and time switched late",
        turns=[
            u(
                "I'd like to see a movie in San Diego this Friday.",
                city="San Diego",
                show_date="this Friday",
            ),
            s("What kind of movie are you in the mood for?", req=["genre"]),
            u("Something scary, a horror film.", genre="horror"),
            s("How about The Hollow Creek? It's showing at Gaslamp Cinema."),
            u("I saw that one already. Anything else?"),
            s("Night Lanterns is also playing at Gaslamp Cinema."),
            u(
                "Okay, Night Lanterns then. 2 tickets for the 8 pm show.",
                _intent="BuyMovieTickets",
                movie_name="Night Lanterns",
                number_of_tickets="2",
                show_time="8 pm",
                theater_name="Gaslamp Cinema",
            ),
            s(
                "Please confirm: 2 tickets for Night Lanterns at Gaslamp Cinema this Friday at 8 "
                "pm."
            ),
            u(
                "Hmm, my friend says Night Lanterns got bad reviews. Let's switch to a thriller.",
                _intent="FindMovies",
                genre="thriller",
            ),
            s("Among thrillers, Glass Harbor is showing this Friday at 8:15 pm at Gaslamp Cinema."),
            u(
                "Let's go with Glass Harbor at 8:15 pm.",
                _intent="BuyMovieTickets",
                movie_name="Glass Harbor",
                show_time="8:15 pm",
            ),
            s(
                "Please confirm: 2 tickets for Glass Harbor at Gaslamp Cinema this Friday at 8:15 "
                "pm."
            ),
            u("Yes, that's correct."),
            s("Your tickets are booked. Enjoy the show!"),
        ],
    ),
    D(
        "Hotels_1",
        "SearchHotel",
        note="no revisions; constraint added",
        turns=[
            u(
                "Hi, I need a hotel room in Chicago for two nights starting April 18th.",
                city="Chicago",
                check_in_date="April 18th",
            ),
            s("The Lakeshore Suites in Chicago has 4 stars and rooms for $189 a night."),
            u("Does it have free wifi? I need to work from the room.", has_wifi="True"),
            s("Yes, it has free wifi."),
            u(
                "Good, please book it, checking out April 20th.",
                _intent="ReserveHotel",
                hotel_name="Lakeshore Suites",
                check_out_date="April 20th",
            ),
            s("Please confirm: 1 room at the Lakeshore Suites from April 18th to April 20th."),
            u("Yes, that's right.", number_of_rooms="1"),
            s("Your room is booked."),
        ],
    ),
]
