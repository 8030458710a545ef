--  avatar_server: answers every HTTP request with a 302 to one of N fox
--  avatars. GNAT.Sockets, an accept loop, and one Ada task per connection.
--
--    gnatmake -O2 -D OUT -o OUT/server avatar_server.adb
--    OUT/server PORT N [TEMPLATE]

with Ada.Characters.Handling; use Ada.Characters.Handling;
with Ada.Command_Line;        use Ada.Command_Line;
with Ada.Numerics.Discrete_Random;
with Ada.Streams;             use Ada.Streams;
with Ada.Strings.Fixed;       use Ada.Strings.Fixed;
with Ada.Text_IO;
with Ada.Unchecked_Deallocation;
with GNAT.Sockets;            use GNAT.Sockets;

procedure Avatar_Server is
   CRLF      : constant String := ASCII.CR & ASCII.LF;
   Head_End  : constant Stream_Element_Array := (13, 10, 13, 10);
   Max_Head  : constant := 8192;

   procedure Usage is
   begin
      Ada.Text_IO.Put_Line
        (Ada.Text_IO.Standard_Error, "usage: server PORT N [TEMPLATE]");
      Set_Exit_Status (2);
   end Usage;

   Port   : Port_Type;
   Images : Positive;
begin
   if Argument_Count not in 2 .. 3 then
      Usage;
      return;
   end if;
   begin
      Port   := Port_Type'Value (Argument (1));
      Images := Positive'Value (Argument (2));
      if Images > 65_535 then
         raise Constraint_Error;
      end if;
   exception
      when Constraint_Error =>
         Usage;
         return;
   end;

   declare
      Template : constant String :=
        (if Argument_Count = 3 then Argument (3)
         else "https://avatar.example/Renard-{n}.png");

      subtype Image is Positive range 1 .. Images;
      package Random_Image is new Ada.Numerics.Discrete_Random (Image);

      --  One generator shared by all tasks, so it lives in a protected
      --  object: Random changes the generator's state.
      protected Dice is
         procedure Reset;
         procedure Roll (Result : out Image);
      private
         Gen : Random_Image.Generator;
      end Dice;

      protected body Dice is
         procedure Reset is
         begin
            Random_Image.Reset (Gen);
         end Reset;

         procedure Roll (Result : out Image) is
         begin
            Result := Random_Image.Random (Gen);
         end Roll;
      end Dice;

      --  Every "{n}" in the template becomes N.
      function Expand (T : String; N : String) return String is
         At_N : constant Natural := Index (T, "{n}");
      begin
         if At_N = 0 then
            return T;
         end if;
         return T (T'First .. At_N - 1) & N & Expand (T (At_N + 3 .. T'Last), N);
      end Expand;

      function Location return String is
         Pick : Image;
      begin
         Dice.Roll (Pick);
         return Expand (Template, Trim (Image'Image (Pick), Ada.Strings.Left));
      end Location;

      function To_Bytes (S : String) return Stream_Element_Array is
         Result : Stream_Element_Array (1 .. S'Length);
      begin
         for I in S'Range loop
            Result (Stream_Element_Offset (I - S'First + 1)) :=
              Character'Pos (S (I));
         end loop;
         return Result;
      end To_Bytes;

      function To_String (B : Stream_Element_Array) return String is
         Result : String (1 .. B'Length);
      begin
         for I in Result'Range loop
            Result (I) := Character'Val (B (B'First + Stream_Element_Offset (I - 1)));
         end loop;
         return Result;
      end To_String;

      function Find
        (Buffer : Stream_Element_Array; Pattern : Stream_Element_Array)
         return Stream_Element_Offset is
      begin
         for I in Buffer'First .. Buffer'Last - Pattern'Length + 1 loop
            if Buffer (I .. I + Pattern'Length - 1) = Pattern then
               return I;
            end if;
         end loop;
         return 0;
      end Find;

      --  HTTP/1.1 keeps the connection unless told "close"; HTTP/1.0 only
      --  when told "keep-alive". A head whose first line has no HTTP
      --  version is garbage. Head is lower-cased.
      type Persistence is (Garbage, Close, Keep_Alive_11, Keep_Alive_10);

      function Persistence_Of (Head : String) return Persistence is
         Line_End : constant Natural := Index (Head, CRLF);
         Request  : constant String :=
           (if Line_End = 0 then Head else Head (Head'First .. Line_End - 1));
         Is_11    : constant Boolean := Index (Request, "http/1.1") > 0;
         Conn     : constant Natural := Index (Head, CRLF & "connection:");
         Value_End : Natural;
      begin
         if Index (Request, " http/1.") = 0 then
            return Garbage;
         elsif Conn > 0 then
            Value_End := Index (Head, CRLF, Conn + 2);
            if Value_End = 0 then
               Value_End := Head'Last + 1;
            end if;
            declare
               Value : String renames Head (Conn + 13 .. Value_End - 1);
            begin
               if Index (Value, "close") > 0 then
                  return Close;
               elsif Index (Value, "keep-alive") > 0 then
                  return (if Is_11 then Keep_Alive_11 else Keep_Alive_10);
               end if;
            end;
         end if;
         return (if Is_11 then Keep_Alive_11 else Close);
      end Persistence_Of;

      procedure Send_All (Socket : Socket_Type; Data : Stream_Element_Array) is
         First : Stream_Element_Offset := Data'First;
         Last  : Stream_Element_Offset;
      begin
         while First <= Data'Last loop
            Send_Socket (Socket, Data (First .. Data'Last), Last);
            First := Last + 1;
         end loop;
      end Send_All;

      --  5,000 connections are 5,000 threads: the default 2 MB stack each
      --  is 10 GB of address space for a few KB of use.
      task type Connection with Storage_Size => 128 * 1024 is
         entry Start (S : Socket_Type);
      end Connection;

      task body Connection is
         Socket : Socket_Type;
         Buffer : Stream_Element_Array (1 .. Max_Head);
         Filled : Stream_Element_Offset := 0;   --  bytes held in Buffer
         Last   : Stream_Element_Offset;
         Stop   : Stream_Element_Offset;
         Mode   : Persistence;
      begin
         accept Start (S : Socket_Type) do
            Socket := S;
         end Start;
         --  Pipelined responses must not wait for the client's ACKs.
         Set_Socket_Option (Socket, IP_Protocol_For_TCP_Level, (No_Delay, True));

         Serve : loop
            --  A head that does not fit in the buffer is not a request.
            exit Serve when Filled = Buffer'Last;
            Receive_Socket (Socket, Buffer (Filled + 1 .. Buffer'Last), Last);
            exit Serve when Last <= Filled;            --  peer closed
            Filled := Last;

            --  Answer every complete head received so far (pipelining).
            loop
               Stop := Find (Buffer (1 .. Filled), Head_End);
               exit when Stop = 0;
               Mode := Persistence_Of (To_Lower (To_String (Buffer (1 .. Stop - 1))));
               exit Serve when Mode = Garbage;
               Send_All (Socket, To_Bytes
                 ("HTTP/1.1 302 Found" & CRLF
                  & "Location: " & Location & CRLF
                  & "Content-Length: 0" & CRLF
                  & (case Mode is
                       when Garbage | Close => "Connection: close" & CRLF,
                       when Keep_Alive_10   => "Connection: keep-alive" & CRLF,
                       when Keep_Alive_11   => "")
                  & CRLF));
               exit Serve when Mode = Close;
               Buffer (1 .. Filled - Stop - 3) := Buffer (Stop + 4 .. Filled);
               Filled := Filled - Stop - 3;
            end loop;
         end loop Serve;

         Close_Socket (Socket);
      exception
         when Socket_Error =>                          --  reset, broken pipe
            Close_Socket (Socket);
      end Connection;

      type Connection_Access is access Connection;
      procedure Free is
        new Ada.Unchecked_Deallocation (Connection, Connection_Access);

      Server  : Socket_Type;
      Client  : Socket_Type;
      Address : Sock_Addr_Type :=
        (Family => Family_Inet, Addr => Loopback_Inet_Addr, Port => Port);
      Handler : Connection_Access;
   begin
      Dice.Reset;
      Create_Socket (Server);
      Set_Socket_Option (Server, Socket_Level, (Reuse_Address, True));
      Bind_Socket (Server, Address);
      Listen_Socket (Server, Length => 4096);
      Address := Get_Socket_Name (Server);
      Ada.Text_IO.Put_Line ("listening on 127.0.0.1:"
         & Trim (Port_Type'Image (Address.Port), Ada.Strings.Left));
      Ada.Text_IO.Flush;

      loop
         begin
            Accept_Socket (Server, Client, Address);
            Handler := new Connection;
            Handler.Start (Client);
            --  Tasks made by "new" belong to this block, so their control
            --  blocks would stay until the block ends (never). Freeing the
            --  access value of a running task is legal; GNAT then frees the
            --  control block when the task terminates (its thread is
            --  detached, so the stack goes with it).
            Free (Handler);
         exception
            when Socket_Error =>                       --  e.g. out of fds
               delay 0.01;
            when Tasking_Error | Storage_Error =>      --  no thread for it
               Close_Socket (Client);
               delay 0.01;
         end;
      end loop;
   end;
end Avatar_Server;
